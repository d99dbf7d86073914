package docker

import (
	"testing"

	"github.com/docker/docker/api/types/events"
)

func TestExitCodeOfDieEvent(t *testing.T) {
	for _, tc := range []struct {
		action string
		attrs  map[string]string
		want   int
	}{
		{"die", map[string]string{"exitCode": "137"}, 137},
		{"die", map[string]string{"exitCode": "0"}, 0},
		{"die", map[string]string{}, -1},
		{"die", map[string]string{"exitCode": "x"}, -1},
		{"start", map[string]string{"exitCode": "1"}, -1},
	} {
		m := events.Message{Action: events.Action(tc.action), Actor: events.Actor{Attributes: tc.attrs}}
		if got := exitCode(m); got != tc.want {
			t.Errorf("%s %v: exitCode %d, want %d", tc.action, tc.attrs, got, tc.want)
		}
	}
}
