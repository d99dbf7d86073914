package runtimetest

import (
	"bytes"
	"errors"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// execCases: runtimeadapter.Execer, as exec probes and hooks use it: the
// exit code is the result, a timeout is ErrExecTimeout, a container that
// does not run is ErrNotRunning.
var execCases = []testCase{
	{"ExitCodes", func(e *env) {
		ex := e.execer()
		id := e.run(e.app("app", Workload{}))
		for _, code := range []int{0, 3} {
			argv, output := e.Exec(Command{ExitCode: code})
			res, err := ex.Exec(e.ctx, id, argv, waitTimeout)
			if err != nil {
				e.t.Errorf("exec %q: %v (a non-zero exit is not an error)", argv, err)
				continue
			}
			if res.ExitCode != code {
				e.t.Errorf("exec %q: exit code %d, want %d", argv, res.ExitCode, code)
			}
			if output != "" && !bytes.Contains(res.Output, []byte(output)) {
				e.t.Errorf("exec %q: output %q, want it to contain %q", argv, res.Output, output)
			}
			if len(res.Output) > runtimeadapter.MaxExecOutput {
				e.t.Errorf("exec %q: %d bytes of output, more than MaxExecOutput", argv, len(res.Output))
			}
		}
	}},
	{"ByName", func(e *env) {
		ex := e.execer()
		spec := e.app("app", Workload{})
		e.run(spec)
		argv, _ := e.Exec(Command{ExitCode: 2})
		if res, err := ex.Exec(e.ctx, spec.Name, argv, waitTimeout); err != nil || res.ExitCode != 2 {
			e.t.Errorf("exec by name: %+v, %v; want exit code 2", res, err)
		}
	}},
	{"Timeout", func(e *env) {
		ex := e.execer()
		id := e.run(e.app("app", Workload{}))
		argv, _ := e.Exec(Command{Hang: true})
		const timeout = time.Second
		start := time.Now()
		res, err := ex.Exec(e.ctx, id, argv, timeout)
		took := time.Since(start)
		if !errors.Is(err, runtimeadapter.ErrExecTimeout) {
			e.t.Fatalf("exec of a hanging command: %+v, %v; want ErrExecTimeout", res, err)
		}
		if res.ExitCode != -1 {
			e.t.Errorf("timed-out exec: exit code %d, want -1", res.ExitCode)
		}
		if took < timeout || took > timeout+slack {
			e.t.Errorf("timed-out exec returned after %v, want its timeout %v (and a little)", took, timeout)
		}
		// The container is unharmed and still runs commands.
		if c := e.inspect(id); c.State != runtimeadapter.StateRunning {
			e.t.Errorf("container after a timed-out exec: %q, want running", c.State)
		}
		argv, _ = e.Exec(Command{ExitCode: 0})
		if res, err := ex.Exec(e.ctx, id, argv, waitTimeout); err != nil || res.ExitCode != 0 {
			e.t.Errorf("exec after a timeout: %+v, %v", res, err)
		}
	}},
	{"NotRunning", func(e *env) {
		ex := e.execer()
		created := e.create(e.app("created", Workload{}))
		exited := e.run(e.app("exited", Workload{Exits: true, ExitAfter: shortExit}))
		e.waitExited(exited)
		argv, _ := e.Exec(Command{})
		for _, id := range []string{created, exited} {
			res, err := ex.Exec(e.ctx, id, argv, waitTimeout)
			if !errors.Is(err, runtimeadapter.ErrNotRunning) {
				e.t.Errorf("exec in a container that does not run: %+v, %v; want ErrNotRunning", res, err)
			}
			if res.ExitCode != -1 {
				e.t.Errorf("failed exec: exit code %d, want -1", res.ExitCode)
			}
		}
	}},
	{"EmptyCommand", func(e *env) {
		ex := e.execer()
		id := e.run(e.app("app", Workload{}))
		if res, err := ex.Exec(e.ctx, id, nil, waitTimeout); err == nil {
			e.t.Errorf("exec of an empty command: %+v, nil; want an error", res)
		}
	}},
}

// execer returns the runtime's Execer, skipping the test when it has none.
func (e *env) execer() runtimeadapter.Execer {
	ex, ok := e.Runtime.(runtimeadapter.Execer)
	if !ok {
		e.t.Skip("runtime does not implement runtimeadapter.Execer")
	}
	if e.Exec == nil {
		e.t.Fatal("runtimetest: the runtime implements Execer, Instance.Exec is nil")
	}
	return ex
}
