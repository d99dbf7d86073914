package docker

import (
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Reasons reported for exited containers.
const (
	reasonOOMKilled = "OOMKilled"
	reasonCompleted = "Completed"
	reasonError     = "Error"
	// reasonUnknown and unknownExitCode report an exited container whose
	// exit code is unknown, as the kubelet does.
	reasonUnknown   = "ContainerStatusUnknown"
	unknownExitCode = 137
)

// mapState maps Docker's state word to the PLEG's: running → running;
// exited and dead → exited; anything else (created, paused, restarting,
// removing, unknown words) → unknown.
func mapState(raw string) runtimeadapter.State {
	switch raw {
	case container.StateRunning:
		return runtimeadapter.StateRunning
	case container.StateExited, container.StateDead:
		return runtimeadapter.StateExited
	default:
		return runtimeadapter.StateUnknown
	}
}

// fromInspect converts an inspect response. Fields Docker leaves empty stay
// zero; Reason is set only for exited containers; Error is Docker's
// State.Error (why a start failed).
func fromInspect(in container.InspectResponse) runtimeadapter.Container {
	var c runtimeadapter.Container
	if in.ContainerJSONBase != nil {
		c.ID = in.ID
		c.Name = strings.TrimPrefix(in.Name, "/")
		c.Image = in.Image // image ID; replaced by the configured name below
		c.CreatedAt = parseTime(in.Created)
		if s := in.State; s != nil {
			c.RawState = s.Status
			c.State = mapState(s.Status)
			c.ExitCode = s.ExitCode
			c.StartedAt = parseTime(s.StartedAt)
			c.FinishedAt = parseTime(s.FinishedAt)
			c.Error = s.Error // a failed start leaves the container created with this
			if c.State == runtimeadapter.StateExited {
				c.Reason = exitReason(s.OOMKilled, s.ExitCode)
			}
		}
	}
	if in.Config != nil {
		if in.Config.Image != "" {
			c.Image = in.Config.Image
		}
		c.Labels = copyLabels(in.Config.Labels)
	}
	c.IP = containerIP(in.NetworkSettings)
	return c
}

// exitReason is "OOMKilled" when the kernel killed the container for memory,
// "Completed" for exit code 0 and "Error" otherwise.
func exitReason(oomKilled bool, exitCode int) string {
	switch {
	case oomKilled:
		return reasonOOMKilled
	case exitCode == 0:
		return reasonCompleted
	default:
		return reasonError
	}
}

// containerIP returns the container's address: the first non-empty address
// among its networks (see networksIP), else the legacy top-level IPAddress
// older engines fill. Empty for host/none/joined modes.
func containerIP(ns *container.NetworkSettings) string {
	if ns == nil {
		return ""
	}
	if ip := networksIP(ns.Networks); ip != "" {
		return ip
	}
	return ns.IPAddress //nolint:staticcheck // fallback for engines that fill only the legacy field
}

// networksIP returns the first non-empty address among networks, by
// network name, "bridge" first.
func networksIP(networks map[string]*network.EndpointSettings) string {
	names := make([]string, 0, len(networks))
	for name := range networks {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "bridge") != (names[j] == "bridge") {
			return names[i] == "bridge"
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		if ep := networks[name]; ep != nil && ep.IPAddress != "" {
			return ep.IPAddress
		}
	}
	return ""
}

// parseTime parses Docker's RFC 3339 timestamps. Docker's "never" value
// (0001-01-01T00:00:00Z) and anything unparsable become the zero time.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t
}

func copyLabels(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
