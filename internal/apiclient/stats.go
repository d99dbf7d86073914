package apiclient

import (
	"context"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/internal/stats"
)

// Summary GETs /stats/summary (CPU and memory only).
func (c *Client) Summary(ctx context.Context) (*statsapi.Summary, error) {
	var s statsapi.Summary
	if err := c.getJSON(ctx, []string{"stats", "summary"}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Machine GETs /spec: the machine's capacity.
func (c *Client) Machine(ctx context.Context) (stats.MachineInfo, error) {
	var m stats.MachineInfo
	err := c.getJSON(ctx, []string{"spec"}, &m)
	return m, err
}
