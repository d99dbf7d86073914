package nodeapi

import (
	"context"
	"fmt"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/internal/stats"
)

var _ api.StatsBackend = (*Backend)(nil)

// StatsSummary answers /stats/summary from b.Stats.
func (b *Backend) StatsSummary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error) {
	if b.Stats == nil {
		return nil, fmt.Errorf("stats are not collected on this node: %w", api.ErrNotFound)
	}
	ctx, cancel := b.query(ctx)
	defer cancel()
	return b.Stats.Summary(ctx, onlyCPUAndMemory)
}

// MachineInfo answers /spec from b.Stats.
func (b *Backend) MachineInfo(context.Context) (stats.MachineInfo, error) {
	if b.Stats == nil {
		return stats.MachineInfo{}, fmt.Errorf("stats are not collected on this node: %w", api.ErrNotFound)
	}
	return b.Stats.Machine(), nil
}
