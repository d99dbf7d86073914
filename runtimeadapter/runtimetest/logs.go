package runtimetest

import (
	"io"
	"strings"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// logCases: runtimeadapter.LogSource, as `kubectl logs` reaches it
// through the node API.
var logCases = []testCase{
	{"ReadsWhatTheContainerPrinted", func(e *env) {
		ls, ok := e.Runtime.(runtimeadapter.LogSource)
		if !ok {
			e.t.Skip("runtime does not implement runtimeadapter.LogSource")
		}
		if e.LogLine == "" {
			e.t.Fatal("runtimetest: the runtime implements LogSource, Instance.LogLine is empty")
		}
		id := e.run(e.app("app", Workload{Exits: true, ExitAfter: shortExit}))
		e.waitExited(id)
		rc, err := ls.Logs(e.ctx, id, runtimeadapter.LogOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc) // without Follow it ends at the log's end
		if err != nil {
			e.t.Fatal(err)
		}
		if !strings.Contains(string(b), e.LogLine) {
			e.t.Errorf("logs %q, want them to contain %q", b, e.LogLine)
		}
	}},
}
