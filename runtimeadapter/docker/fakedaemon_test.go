package docker_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// fakeDaemonAPIVersion is the API version the fake daemon answers pings
// with: Docker 20.10's, older than the client's own.
const fakeDaemonAPIVersion = "1.41"

// inspectBehaviour is how the fake daemon answers the inspect of one
// container.
type inspectBehaviour int

const (
	inspectOK   inspectBehaviour = iota
	inspectHang                  // until the client gives up
	inspectFail                  // 500
)

// fakeDaemon speaks the few endpoints of the Docker Engine API that List,
// Inspect and Events use (/_ping, /containers/json,
// /containers/{id}/json, /events), so their behaviour around failing
// calls is tested without Docker.
type fakeDaemon struct {
	t   *testing.T
	srv *httptest.Server

	mu          sync.Mutex
	pingUp      bool
	listFails   bool
	containers  []container.Summary
	inspect     map[string]inspectBehaviour // by ID; default inspectOK
	inspects    map[string]int              // inspect requests by ID
	inFlight    int                         // inspect requests being answered
	maxInFlight int
	pings       int               // answered with 200
	versions    map[string]int    // API version prefix of every other request
	stateErrors map[string]string // State.Error by ID (a failed start)
}

func newFakeDaemon(t *testing.T) *fakeDaemon { return newFakeDaemonOn(t, nil) }

// newFakeDaemonOn serves on l (nil: a TCP port of its own).
func newFakeDaemonOn(t *testing.T, l net.Listener) *fakeDaemon {
	d := &fakeDaemon{t: t, pingUp: true, inspect: map[string]inspectBehaviour{}, inspects: map[string]int{}, versions: map[string]int{}}
	d.srv = httptest.NewUnstartedServer(http.HandlerFunc(d.serve))
	if l != nil {
		_ = d.srv.Listener.Close()
		d.srv.Listener = l
	}
	d.srv.Start()
	t.Cleanup(d.srv.Close)
	return d
}

// host is the daemon's address for docker.WithHost.
func (d *fakeDaemon) host() string { return "tcp://" + d.srv.Listener.Addr().String() }

// add lists a managed container of node: running unless status says
// "Exited (n) ..." (state exited), "Dead" (state dead) or "Created" (state
// created).
func (d *fakeDaemon) add(node, id, status string, behaviour inspectBehaviour) {
	state := container.StateRunning
	switch {
	case strings.HasPrefix(status, "Exited"):
		state = container.StateExited
	case status == "Dead":
		state = container.StateDead
	case status == "Created":
		state = container.StateCreated
	}
	meta := runtimeadapter.Meta{Node: node, PodUID: "uid-" + id, PodName: "pod-" + id, PodNamespace: "default",
		ContainerName: "app", Type: runtimeadapter.TypeApp, Hash: "h1", GracePeriod: time.Second}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.containers = append(d.containers, container.Summary{
		ID: id, Names: []string{"/name-" + id}, Image: "work:1", Labels: meta.Labels(),
		State: state, Status: status, Created: 1700000000,
	})
	d.inspect[id] = behaviour
}

// failStart makes a created container look as Docker leaves one whose
// start failed: still created, exit code 127 and State.Error msg.
func (d *fakeDaemon) failStart(id, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stateErrors == nil {
		d.stateErrors = map[string]string{}
	}
	d.stateErrors[id] = msg
}

func (d *fakeDaemon) setInspect(id string, b inspectBehaviour) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inspect[id] = b
}

func (d *fakeDaemon) inspectCount(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inspects[id]
}

func (d *fakeDaemon) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == "/_ping" {
		d.mu.Lock()
		up := d.pingUp
		if up {
			d.pings++
		}
		d.mu.Unlock()
		if !up {
			writeAPIError(w, http.StatusInternalServerError, "fake daemon: not ready")
			return
		}
		w.Header().Set("Api-Version", fakeDaemonAPIVersion)
		w.WriteHeader(http.StatusOK)
		return
	}
	version, rest, ok := strings.Cut(strings.TrimPrefix(path, "/v"), "/")
	if !ok {
		writeAPIError(w, http.StatusNotFound, "fake daemon: unversioned path "+path)
		return
	}
	d.mu.Lock()
	d.versions[version]++
	d.mu.Unlock()
	segs := strings.Split(rest, "/")
	switch {
	case r.Method == http.MethodGet && rest == "containers/json":
		d.mu.Lock()
		fails, cs := d.listFails, append([]container.Summary(nil), d.containers...)
		d.mu.Unlock()
		if fails {
			writeAPIError(w, http.StatusInternalServerError, "fake daemon: list failed")
			return
		}
		writeJSON(w, cs)
	case r.Method == http.MethodGet && len(segs) == 3 && segs[0] == "containers" && segs[2] == "json":
		d.serveInspect(w, r, segs[1])
	case r.Method == http.MethodGet && rest == "events":
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	default:
		writeAPIError(w, http.StatusNotFound, "fake daemon: no route "+r.Method+" "+path)
	}
}

func (d *fakeDaemon) serveInspect(w http.ResponseWriter, r *http.Request, id string) {
	d.mu.Lock()
	d.inspects[id]++
	d.inFlight++
	d.maxInFlight = max(d.maxInFlight, d.inFlight)
	b := d.inspect[id]
	stateErr := d.stateErrors[id]
	var s *container.Summary
	for i := range d.containers {
		if d.containers[i].ID == id {
			s = &d.containers[i]
		}
	}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.inFlight--
		d.mu.Unlock()
	}()
	switch {
	case s == nil:
		writeAPIError(w, http.StatusNotFound, "No such container: "+id)
	case b == inspectHang:
		<-r.Context().Done()
	case b == inspectFail:
		writeAPIError(w, http.StatusInternalServerError, "fake daemon: inspect failed")
	default:
		in := inspectOf(*s)
		if stateErr != "" {
			in.State.Error, in.State.ExitCode = stateErr, 127
		}
		writeJSON(w, in)
	}
}

// The times every inspected container of the fake daemon reports.
var (
	fakeStarted  = time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	fakeFinished = fakeStarted.Add(time.Minute)
)

// inspectOf is the inspect response of a listed container: started at
// fakeStarted, finished at fakeFinished when exited, with the exit code its
// status line says.
func inspectOf(s container.Summary) container.InspectResponse {
	st := &container.State{Status: s.State, StartedAt: fakeStarted.Format(time.RFC3339Nano), FinishedAt: "0001-01-01T00:00:00Z"}
	if s.State == container.StateCreated {
		st.StartedAt = "0001-01-01T00:00:00Z"
	} else if s.State != container.StateRunning {
		st.FinishedAt = fakeFinished.Format(time.RFC3339Nano)
		st.ExitCode = 3
		if strings.HasPrefix(s.Status, "Exited (0)") {
			st.ExitCode = 0
		}
	}
	return container.InspectResponse{
		ContainerJSONBase: &container.ContainerJSONBase{
			ID: s.ID, Name: s.Names[0], Image: "sha256:0123", State: st,
			Created: time.Unix(s.Created, 123).UTC().Format(time.RFC3339Nano),
		},
		Config: &container.Config{Image: s.Image, Labels: s.Labels},
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeAPIError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// byID indexes a listing.
func byID(t *testing.T, cs []runtimeadapter.Container) map[string]runtimeadapter.Container {
	t.Helper()
	out := map[string]runtimeadapter.Container{}
	for _, c := range cs {
		if _, dup := out[c.ID]; dup {
			t.Fatalf("container %s listed twice", c.ID)
		}
		out[c.ID] = c
	}
	return out
}

// withTimeout is a context for one call of a test against the fake daemon.
func withTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
