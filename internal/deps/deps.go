// Package deps pins the modules actorlet's packages are being built on, so
// `go mod tidy` keeps them while those packages land. Remove an import once
// real code uses it.
package deps

import (
	_ "github.com/asynkron/protoactor-go/actor"
	_ "github.com/cenkalti/backoff/v4"
	_ "github.com/docker/docker/client"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
	_ "go.uber.org/zap"
	_ "go.uber.org/zap/exp/zapslog"
	_ "sigs.k8s.io/yaml"
)
