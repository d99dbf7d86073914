// Command buildimages builds the images actorlet's tests use, for the
// Makefile: the pause image (testimages.PauseTag, compiled from
// ./images/pause), the test workload (testimages.TestWorkloadTag) and the
// gRPC health server (testimages.GRPCHealthTag).
// Run it from inside the repository:
//
//	go run ./test/support/testimages/cmd/buildimages
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/actorlet/actorlet/runtimeadapter/docker"
	"github.com/actorlet/actorlet/test/support/testimages"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "buildimages:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rt, err := docker.New()
	if err != nil {
		return err
	}
	defer rt.Close()
	if err := testimages.BuildPause(ctx, rt, testimages.PauseTag); err != nil {
		return err
	}
	fmt.Println("built", testimages.PauseTag)
	if err := testimages.Build(ctx, rt, testimages.TestWorkloadTag, testimages.TestWorkloadPkg); err != nil {
		return err
	}
	fmt.Println("built", testimages.TestWorkloadTag)
	if err := testimages.Build(ctx, rt, testimages.GRPCHealthTag, testimages.GRPCHealthPkg); err != nil {
		return err
	}
	fmt.Println("built", testimages.GRPCHealthTag)
	return nil
}
