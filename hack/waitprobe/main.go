// Command waitprobe compares ways of learning a container's exit from
// Docker's containerd: its "/tasks/exit" event, the Tasks.Wait call, and
// a pidfd (pidfd_open) on the task's init pid, watched by one epoll
// goroutine, followed by Tasks.Get for the exit status (issue 16's
// detection split). It prints exited_at → each path's receipt. A
// measurement tool, not part of actorlet.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	apievents "github.com/containerd/containerd/api/events"
	eventsapi "github.com/containerd/containerd/api/services/events/v1"
	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/typeurl/v2"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

func main() {
	addr := flag.String("addr", "/run/containerd/containerd.sock", "containerd socket")
	ns := flag.String("ns", "moby", "namespace")
	n := flag.Int("n", 50, "exits to wait for")
	flag.Parse()
	conn, err := grpc.NewClient("unix://"+*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "containerd-namespace", *ns)
	ev := eventsapi.NewEventsClient(conn)
	tasks := tasksapi.NewTasksClient(conn)
	subCtx, cancelSub := context.WithCancel(ctx)
	stream, err := ev.Subscribe(subCtx, &eventsapi.SubscribeRequest{Filters: []string{
		fmt.Sprintf("topic==\"/tasks/exit\",namespace==%q", *ns), fmt.Sprintf("topic==\"/tasks/start\",namespace==%q", *ns)}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	type rec struct {
		exited, event, wait time.Time
		pidfd               time.Time // the pidfd became readable
		got                 time.Time // Tasks.Get after it said STOPPED
		gets                int       // Get calls until it did
		// stat: /proc/<pid>/stat's exit_code read off the zombie after
		// the pidfd became readable (statOK: read, and the pidfd said the
		// process was still not reaped after it).
		stat   time.Time
		statOK bool
		code   int
		evCode int // the event's exit status
	}
	var mu sync.Mutex
	recs := map[string]*rec{}
	get := func(id string) *rec {
		r := recs[id]
		if r == nil {
			r = &rec{}
			recs[id] = r
		}
		return r
	}
	waitFor := func(id string) {
		resp, err := tasks.Wait(ctx, &tasksapi.WaitRequest{ContainerID: id})
		at := time.Now()
		if err != nil {
			return
		}
		mu.Lock()
		r := get(id)
		r.wait = at
		if r.exited.IsZero() {
			r.exited = resp.ExitedAt.AsTime()
		}
		mu.Unlock()
	}
	// pidfds: one epoll goroutine; on readable, Tasks.Get until STOPPED.
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var fdMu sync.Mutex
	byFD := map[int32]string{}
	pidOf := map[int32]uint32{}
	getExit := func(id string) {
		for i := 1; i <= 50; i++ {
			resp, err := tasks.Get(ctx, &tasksapi.GetRequest{ContainerID: id})
			if err != nil {
				return
			}
			if resp.Process.ExitedAt != nil && resp.Process.ExitedAt.AsTime().Year() > 1971 {
				at := time.Now()
				mu.Lock()
				r := get(id)
				r.got, r.gets = at, i
				mu.Unlock()
				return
			}
			time.Sleep(500 * time.Microsecond)
		}
	}
	go func() {
		evs := make([]unix.EpollEvent, 16)
		for {
			n, err := unix.EpollWait(ep, evs, -1)
			if err != nil {
				continue
			}
			at := time.Now()
			for _, e := range evs[:n] {
				fdMu.Lock()
				id, pid := byFD[e.Fd], pidOf[e.Fd]
				delete(byFD, e.Fd)
				delete(pidOf, e.Fd)
				fdMu.Unlock()
				code, ok := zombieExit(pid)
				if ok && unix.PidfdSendSignal(int(e.Fd), 0, nil, 0) != nil {
					ok = false // reaped meanwhile: the pid may be another's
				}
				st := time.Now()
				_ = unix.EpollCtl(ep, unix.EPOLL_CTL_DEL, int(e.Fd), nil)
				_ = unix.Close(int(e.Fd))
				mu.Lock()
				r := get(id)
				r.pidfd, r.stat, r.statOK, r.code = at, st, ok, code
				mu.Unlock()
				go getExit(id)
			}
		}
	}()
	watch := func(id string, pid uint32) {
		fd, err := unix.PidfdOpen(int(pid), 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pidfd_open:", err)
			return
		}
		fdMu.Lock()
		byFD[int32(fd)] = id
		pidOf[int32(fd)] = pid
		fdMu.Unlock()
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			fmt.Fprintln(os.Stderr, "epoll_ctl:", err)
		}
	}
	// running tasks now
	if l, err := tasks.List(ctx, &tasksapi.ListTasksRequest{}); err == nil {
		for _, t := range l.Tasks {
			go waitFor(t.ContainerID)
			watch(t.ContainerID, t.Pid)
		}
	}
	if l, err := tasks.List(ctx, &tasksapi.ListTasksRequest{}); err == nil {
		for _, t := range l.Tasks {
			go waitFor(t.ContainerID)
		}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	go func() { <-stop; cancelSub() }() // print what was seen
	done := 0
	for done < *n {
		env, err := stream.Recv()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			break
		}
		at := time.Now()
		v, err := typeurl.UnmarshalAny(env.Event)
		if err != nil {
			continue
		}
		switch e := v.(type) {
		case *apievents.TaskStart:
			go waitFor(e.ContainerID)
			watch(e.ContainerID, e.Pid)
		case *apievents.TaskExit:
			if e.ID != e.ContainerID {
				continue
			}
			mu.Lock()
			r := get(e.ContainerID)
			r.event, r.exited, r.evCode = at, e.ExitedAt.AsTime(), int(e.ExitStatus)
			mu.Unlock()
			done++
		}
	}
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	var evs, ws, diff, pf, got, pfEv, gotEv []time.Duration
	var gets []int
	var stat, combined, missEv, hitEv []time.Duration
	statMiss, codeWrong := 0, 0
	for _, r := range recs {
		if r.event.IsZero() || r.wait.IsZero() {
			continue
		}
		evs = append(evs, r.event.Sub(r.exited))
		ws = append(ws, r.wait.Sub(r.exited))
		diff = append(diff, r.event.Sub(r.wait))
		if !r.pidfd.IsZero() && !r.got.IsZero() {
			pf = append(pf, r.pidfd.Sub(r.exited))
			got = append(got, r.got.Sub(r.exited))
			pfEv = append(pfEv, r.event.Sub(r.pidfd))
			gotEv = append(gotEv, r.event.Sub(r.got))
			gets = append(gets, r.gets)
			if r.statOK {
				stat = append(stat, r.stat.Sub(r.exited))
				combined = append(combined, min(r.stat.Sub(r.exited), r.event.Sub(r.exited)))
				hitEv = append(hitEv, r.event.Sub(r.exited))
				if r.code != r.evCode {
					codeWrong++
				}
			} else {
				statMiss++
				combined = append(combined, r.event.Sub(r.exited))
				missEv = append(missEv, r.event.Sub(r.exited))
			}
		}
	}
	sort.Ints(gets)
	p := func(xs []time.Duration) string {
		sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
		if len(xs) == 0 {
			return "n/a"
		}
		q := func(f float64) time.Duration { return xs[min(len(xs)-1, int(f*float64(len(xs))))] }
		return fmt.Sprintf("p50 %v p90 %v p99 %v max %v", q(.5), q(.9), q(.99), xs[len(xs)-1])
	}
	fmt.Printf("exits with both: %d\nevent: %s\nwait:  %s\nevent - wait: %s\n", len(evs), p(evs), p(ws), p(diff))
	fmt.Printf("with a pidfd and Get: %d\npidfd readable (from exited_at): %s\nGet says stopped (from exited_at): %s\nevent - pidfd: %s\nevent - Get: %s\n", len(pf), p(pf), p(got), p(pfEv), p(gotEv))
	fmt.Printf("exit code read off the zombie (/proc/<pid>/stat) after the pidfd (from exited_at): %d, %s; missed (reaped first) %d; code differs from the event's %d\n", len(stat), p(stat), statMiss, codeWrong)
	fmt.Printf("pidfd + zombie read, else the event (from exited_at): %s\nthe event, where the zombie read missed: %s\nthe event, where it hit: %s\n", p(combined), p(missEv), p(hitEv))
	if len(gets) > 0 {
		fmt.Printf("Get calls until stopped: p50 %d max %d\n", gets[len(gets)/2], gets[len(gets)-1])
	}
}

// zombieExit reads the exit status of process pid, a zombie not yet
// reaped, from field 52 (exit_code) of /proc/<pid>/stat, as containerd
// reports it: the exit code, or 128 + the signal.
func zombieExit(pid uint32) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); exit_code is field 52.
	if len(f) < 50 || f[0] != "Z" {
		return 0, false
	}
	ws, err := strconv.Atoi(f[49])
	if err != nil {
		return 0, false
	}
	st := unix.WaitStatus(ws)
	if st.Signaled() {
		return 128 + int(st.Signal()), true
	}
	return st.ExitStatus(), true
}
