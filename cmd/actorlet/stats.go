package main

import (
	"context"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/stats"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// startStats starts the stats collector behind /stats/summary and
// /metrics/resource, sampling until ctx ends or stop is called (stop waits
// for the sampler to end); nil when --stats-interval is 0 or the host's
// cgroups cannot be found (logged: the agent runs on).
func startStats(ctx context.Context, f runFlags, log *zap.Logger, rt runtimeadapter.Runtime) (_ *stats.Collector, stop func()) {
	nop := func() {}
	if f.statsInterval <= 0 {
		return nil, nop
	}
	cg, err := stats.Detect()
	if err != nil {
		log.Warn("no stats: the host's cgroups were not found", zap.Error(err))
		return nil, nop
	}
	sc, err := stats.New(stats.Options{
		NodeName: f.nodeName, Runtime: rt, Cgroups: cg, RootDir: f.rootDir,
		Interval: f.statsInterval, Logger: log.Named("stats"),
	})
	if err != nil {
		log.Warn("no stats", zap.Error(err))
		return nil, nop
	}
	log.Info("stats from the cgroups", zap.Int("cgroupVersion", cg.Version()), zap.Duration("interval", f.statsInterval))
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc.Run(ctx)
	}()
	return sc, func() { cancel(); <-done }
}
