package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Helpers of lifecycle_test.go. Their names start with "lc" so that they
// cannot clash with helpers other files of the package add.

// lcAPI is a client of one agent's read-only HTTP API.
type lcAPI struct {
	t    *testing.T
	base string // http://host:port
	http *http.Client
}

// lcAPIOf waits for the agent's "actorlet running" line and returns a
// client of the API address it names.
func lcAPIOf(t *testing.T, a *agent) *lcAPI {
	t.Helper()
	addr := a.waitLog(podUpTimeout, "actorlet running").str("api")
	if addr == "" {
		t.Fatal(`the "actorlet running" log line has no api address`)
	}
	return &lcAPI{t: t, base: "http://" + addr, http: &http.Client{Timeout: 10 * time.Second}}
}

// pod returns /pods/default/{name}.
func (c *lcAPI) pod(name string) (*v1.Pod, error) {
	var p v1.Pod
	if err := getJSON(c.http, c.base+"/pods/default/"+name, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// events returns /events.
func (c *lcAPI) events() ([]v1.Event, error) {
	var list v1.EventList
	if err := getJSON(c.http, c.base+"/events", &list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// podEvents returns the events about pod podName with the given reason.
func (c *lcAPI) podEvents(podName, reason string) ([]v1.Event, error) {
	evs, err := c.events()
	if err != nil {
		return nil, err
	}
	var out []v1.Event
	for _, e := range evs {
		if e.InvolvedObject.Name == podName && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out, nil
}

// lcEventsString describes events for failure messages.
func lcEventsString(evs []v1.Event) string {
	if len(evs) == 0 {
		return "no events"
	}
	parts := make([]string, 0, len(evs))
	for _, e := range evs {
		parts = append(parts, fmt.Sprintf("%s/%s %s %s: %q", e.InvolvedObject.Name, e.InvolvedObject.FieldPath, e.Type, e.Reason, e.Message))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// lcContainerStatus returns the status of app container name in p (nil if
// absent).
func lcContainerStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// lcCondition returns the status of condition typ of p ("" if absent).
func lcCondition(p *v1.Pod, typ v1.PodConditionType) v1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// lcDescribePod describes a pod's status for failure messages: phase,
// reason, conditions and every container's state.
func lcDescribePod(p *v1.Pod) string {
	if p == nil {
		return "no pod"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s", p.Status.Phase)
	if p.Status.Reason != "" {
		fmt.Fprintf(&b, " reason=%s", p.Status.Reason)
	}
	if p.Status.Message != "" {
		fmt.Fprintf(&b, " message=%q", p.Status.Message)
	}
	conds := make([]string, 0, len(p.Status.Conditions))
	for _, c := range p.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	fmt.Fprintf(&b, " conditions=%v", conds)
	for _, cs := range p.Status.InitContainerStatuses {
		fmt.Fprintf(&b, " init:%s", lcDescribeContainer(cs))
	}
	for _, cs := range p.Status.ContainerStatuses {
		fmt.Fprintf(&b, " %s", lcDescribeContainer(cs))
	}
	return b.String()
}

func lcDescribeContainer(cs v1.ContainerStatus) string {
	state := "none"
	switch s := cs.State; {
	case s.Running != nil:
		state = "running"
	case s.Waiting != nil:
		state = "waiting(" + s.Waiting.Reason + ")"
	case s.Terminated != nil:
		state = fmt.Sprintf("terminated(%s,%d)", s.Terminated.Reason, s.Terminated.ExitCode)
	}
	started := "nil"
	if cs.Started != nil {
		started = fmt.Sprint(*cs.Started)
	}
	last := ""
	if t := cs.LastTerminationState.Terminated; t != nil {
		last = fmt.Sprintf(" last=terminated(%s,%d)", t.Reason, t.ExitCode)
	}
	return fmt.Sprintf("%s{%s restarts=%d ready=%v started=%s id=%s%s}", cs.Name, state, cs.RestartCount, cs.Ready, started,
		short(strings.TrimPrefix(cs.ContainerID, "docker://")), last)
}

// lcFreePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func lcFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	return port
}

// lcHTTPGet sends GET url (to 127.0.0.1 only) and returns the status code
// and body.
func lcHTTPGet(url string) (int, string, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	r, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(io.LimitReader(r.Body, 4096))
	return r.StatusCode, strings.TrimSpace(string(b)), err
}

// lcDockerTime parses a Docker inspect time (RFC 3339 with nanoseconds);
// the zero time for an empty or zero value.
func (e *env) lcDockerTime(what, s string) time.Time {
	e.t.Helper()
	if s == "" || strings.HasPrefix(s, "0001-01-01") {
		return time.Time{}
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		e.t.Fatalf("%s: bad Docker time %q: %v", what, s, err)
	}
	return ts
}

// lcTimes is what Docker says of one container's run.
type lcTimes struct {
	running         bool
	status          string
	exitCode        int
	created         time.Time
	started, finish time.Time
	networkMode     string
}

// lcInspect inspects container id (found false when it is gone).
func (e *env) lcInspect(id string) (lcTimes, bool) {
	e.t.Helper()
	in, found := e.inspect(id)
	if !found {
		return lcTimes{}, false
	}
	var out lcTimes
	out.created = e.lcDockerTime(short(id)+" Created", in.Created)
	if in.State != nil {
		out.running = in.State.Running
		out.status = in.State.Status
		out.exitCode = in.State.ExitCode
		out.started = e.lcDockerTime(short(id)+" StartedAt", in.State.StartedAt)
		out.finish = e.lcDockerTime(short(id)+" FinishedAt", in.State.FinishedAt)
	}
	if in.HostConfig != nil {
		out.networkMode = string(in.HostConfig.NetworkMode)
	}
	return out, true
}

// lcMountSource returns the host path mounted at dest in container id.
func (e *env) lcMountSource(id, dest string) string {
	e.t.Helper()
	in, found := e.inspect(id)
	if !found {
		e.t.Fatalf("container %s is gone", short(id))
	}
	var seen []string
	for _, m := range in.Mounts {
		if m.Destination == dest {
			return m.Source
		}
		seen = append(seen, m.Source+":"+m.Destination)
	}
	e.t.Fatalf("container %s has no mount at %s; mounts: %v", short(id), dest, seen)
	return ""
}

// lcOfType returns the containers whose type label is typ.
func (cs containers) lcOfType(typ runtimeadapter.ContainerType) containers {
	var out containers
	for _, c := range cs {
		if c.Labels[runtimeadapter.LabelContainerType] == string(typ) {
			out = append(out, c)
		}
	}
	return out
}

// lcNamed returns the containers (any state) whose container-name label is
// name.
func (cs containers) lcNamed(name string) containers {
	var out containers
	for _, c := range cs {
		if c.Labels[runtimeadapter.LabelContainerName] == name {
			out = append(out, c)
		}
	}
	return out
}

// lcCountByName counts containers per container-name label, as "name=n"
// pairs sorted, for messages and comparisons.
func (cs containers) lcCountByName() string {
	n := map[string]int{}
	for _, c := range cs {
		n[c.Labels[runtimeadapter.LabelContainerName]]++
	}
	parts := make([]string, 0, len(n))
	for k, v := range n {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
