// Package pauseimage provides actorlet's pod sandbox ("pause") image. The
// static pause binary (./images/pause) is embedded at build time when
// `make` has put it in internal/pauseimage/bin/; Ensure turns it into a
// FROM scratch image on first use, so a node needs no registry.
package pauseimage

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/actorlet/actorlet/internal/version"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
)

// Version is the pause image's version: actorlet's.
const Version = version.Version

// DefaultTag is the pause image actorlet uses unless --pod-infra-image says
// otherwise.
const DefaultTag = "actorlet/pause:" + Version

//go:embed bin
var binDir embed.FS

// binaryName is the pause binary's name in bin/ and in the image (/pause).
const binaryName = "pause"

// ErrNoBinary: the pause image is missing and this actorlet was built
// without the embedded pause binary.
var ErrNoBinary = errors.New("pause binary not embedded: build actorlet with `make` " +
	"(it compiles ./images/pause into internal/pauseimage/bin/pause first) " +
	"or pass --pod-infra-image naming an existing image")

// Binary returns the embedded pause binary, or nil if actorlet was built
// without it.
func Binary() []byte {
	b, err := fs.ReadFile(binDir, "bin/"+binaryName)
	if err != nil || len(b) == 0 {
		return nil
	}
	return b
}

// Ensure makes image tag exist: nothing to do if it does; else it builds it
// from the embedded binary. Errors: ErrNoBinary (wrapped, naming tag) when
// the image is missing and no binary is embedded; Docker errors otherwise.
func Ensure(ctx context.Context, rt *docker.Runtime, tag string) error {
	ok, err := rt.ImageExists(ctx, tag)
	if err != nil || ok {
		return err
	}
	bin := Binary()
	if bin == nil {
		return fmt.Errorf("pause image %s does not exist: %w", tag, ErrNoBinary)
	}
	return Build(ctx, rt, tag, bin)
}

// Build builds (or rebuilds) image tag: FROM scratch with binary as /pause,
// its entrypoint.
func Build(ctx context.Context, rt *docker.Runtime, tag string, binary []byte) error {
	if len(binary) == 0 {
		return fmt.Errorf("build pause image %s: empty binary", tag)
	}
	return rt.BuildImage(ctx, tag, buildContext(binary))
}

func buildContext(binary []byte) map[string][]byte {
	dockerfile := "FROM scratch\nCOPY " + binaryName + " /" + binaryName + "\n" +
		`ENTRYPOINT ["/` + binaryName + `"]` + "\n"
	return map[string][]byte{
		docker.Dockerfile: []byte(dockerfile),
		binaryName:        binary,
	}
}

// Local is the docker.Option that builds image tag from the embedded
// pause binary when a sandbox first needs it and it is missing (rather
// than at start, when the daemon may not answer yet). Errors, then:
// ErrNoBinary (wrapped, naming tag) without an embedded binary.
func Local(tag string) docker.Option {
	return docker.WithLocalImage(tag, func() (map[string][]byte, error) {
		bin := Binary()
		if bin == nil {
			return nil, fmt.Errorf("pause image %s does not exist: %w", tag, ErrNoBinary)
		}
		return buildContext(bin), nil
	})
}
