package docker

import (
	"context"

	"github.com/docker/docker/api/types/container"
)

// RawInspect returns Docker's own inspect response, for tests that check
// how a spec was mapped (HostConfig, Config).
func (r *Runtime) RawInspect(ctx context.Context, id string) (container.InspectResponse, error) {
	cli, err := r.api(ctx)
	if err != nil {
		return container.InspectResponse{}, err
	}
	return cli.ContainerInspect(ctx, id)
}
