package node

import (
	"github.com/actorlet/actorlet/internal/pauseimage"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
)

// LocalPauseImage is the docker.Option that builds DefaultPodInfraImage
// from the pause binary in this actorlet build when a sandbox first needs
// it (no registry has it): pass it to docker.New for a node that uses the
// default PodInfraImage. Nothing is built before then, so a node spawned
// while Docker does not answer yet waits for nothing: it reports the
// runtime unhealthy (GetHealth) and converges once Docker answers. An
// actorlet built without `make` has no pause binary; the sandboxes' start
// then fails naming the image, and PodInfraImage must name another.
func LocalPauseImage() docker.Option { return pauseimage.Local(DefaultPodInfraImage) }
