// Command pause is the sandbox container of every actorlet pod: it holds the
// pod's network namespace and does nothing else. It blocks until SIGTERM or
// SIGINT and then exits 0. As PID 1 it reaps any zombie process reparented
// to it (on SIGCHLD).
//
// Build it static and small:
//
//	CGO_ENABLED=0 go build -ldflags='-s -w' -o internal/pauseimage/bin/pause ./images/pause
package main

import (
	"os"
	"os/signal"
	"syscall"
)

// sigs is set up during package initialisation, as early as a Go program
// can: a SIGTERM that comes before gets Go's default action (exit status 2).
var sigs = notify()

func notify() chan os.Signal {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	return c
}

func main() {
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every exited child without blocking. Signals coalesce, so
// one SIGCHLD may stand for several children.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
