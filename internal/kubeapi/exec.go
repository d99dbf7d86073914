package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Execer is implemented by a Backend that runs kubectl exec's commands.
type Execer interface {
	// Exec runs cmd in a container of a managed pod with s's streams and
	// returns its exit code.
	Exec(ctx context.Context, namespace, pod, container string, cmd []string, s runtimeadapter.ExecStreams) (int, error)
}

// The channels of Kubernetes' remote command protocol over WebSocket:
// each binary message starts with its channel's number.
const (
	chanStdin  = 0
	chanStdout = 1
	chanStderr = 2
	chanError  = 3
	chanResize = 4
	chanClose  = 255 // v5: [255, n] closes channel n (stdin's EOF)
)

// Subprotocols served: v5 (kubectl 1.30+, which can close stdin) and v4.
const (
	protoV5 = "v5.channel.k8s.io"
	protoV4 = "v4.channel.k8s.io"
)

// exec says whether pods/exec is served.
func (h *Handler) exec() bool {
	_, ok := h.b.(Execer)
	return ok
}

// execQuery is pods/exec's query.
type execQuery struct {
	command                    []string
	container                  string
	stdin, stdout, stderr, tty bool
}

func parseExecQuery(v url.Values) (execQuery, error) {
	q := execQuery{command: v["command"], container: v.Get("container")}
	if len(q.command) == 0 {
		return q, errBadRequest("you must specify at least one command for the container")
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"stdin", &q.stdin}, {"stdout", &q.stdout}, {"stderr", &q.stderr}, {"tty", &q.tty}} {
		var err error
		if *b.dst, err = boolParam(v, b.key); err != nil {
			return q, err
		}
	}
	if q.tty && q.stderr {
		q.stderr = false // with a terminal, stderr is in stdout
	}
	return q, nil
}

// sameOrigin refuses a WebSocket upgrade from a page of another origin: a
// browser sends Origin, kubectl does not.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// podExec serves pods/exec over the WebSocket remote command protocol
// (v5.channel.k8s.io, as kubectl 1.30+ speaks it; v4 too): stdin, stdout,
// stderr, a TTY and its resizes, and the outcome on the error channel: a
// Success Status, or a Failure with reason NonZeroExitCode and the code,
// which kubectl exits with.
func (h *Handler) podExec(w http.ResponseWriter, r *http.Request, ns, name string) error {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return errMethod(r.Method, "pods/exec")
	}
	if err := authorizeWrite(r, "exec in a pod"); err != nil {
		return err
	}
	if !sameOrigin(r) {
		return newStatus(http.StatusForbidden, metav1.StatusReasonForbidden, nil,
			"exec from origin %q refused: only clients of this server's own origin (or none, as kubectl) may exec", r.Header.Get("Origin"))
	}
	q, err := parseExecQuery(r.URL.Query())
	if err != nil {
		return err
	}
	container, err := h.podContainer(r.Context(), ns, name, q.container)
	if err != nil {
		return err
	}
	q.container = container
	if !websocket.IsWebSocketUpgrade(r) {
		return newStatus(http.StatusBadRequest, metav1.StatusReasonBadRequest, nil,
			"pods/exec is served over WebSocket (%s) only: upgrade the connection (kubectl 1.30 or newer does)", protoV5)
	}
	up := websocket.Upgrader{
		Subprotocols:     []string{protoV5, protoV4},
		CheckOrigin:      sameOrigin,
		HandshakeTimeout: 10 * time.Second,
	}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return nil // the upgrader answered
	}
	defer conn.Close()
	h.runExec(r.Context(), conn, ns, name, q)
	return nil
}

// wsWriter writes one channel's data as binary messages; writes of all
// channels share one lock (one writer at a time on a connection).
//
// The first write waits until streamsReady after the upgrade: kubectl's
// WebSocket client (client-go 1.32) starts reading the connection before
// it has made its streams, and drops a message for a stream it has not
// made yet ("Unknown stream id 3, discarding message"), so an answer sent
// at once — a missing command's error, a fast command's output — could be
// lost and kubectl exit 1 with "closed all streams". An API server's exec
// goes to a kubelet and a runtime first, which is slower than that.
type wsWriter struct {
	mu    *sync.Mutex
	conn  *websocket.Conn
	ch    byte
	ready *time.Time // the first write waits until then (zero: done)
}

// streamsReady is how long after the upgrade the first message is sent.
const streamsReady = 200 * time.Millisecond

func (w wsWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ready.IsZero() {
		time.Sleep(time.Until(*w.ready))
		*w.ready = time.Time{}
	}
	msg := make([]byte, len(p)+1)
	msg[0] = w.ch
	copy(msg[1:], p)
	_ = w.conn.SetWriteDeadline(time.Now().Add(time.Minute))
	if err := w.conn.WriteMessage(websocket.BinaryMessage, msg); err != nil {
		return 0, err
	}
	return len(p), nil
}

// runExec runs the command over an upgraded connection.
func (h *Handler) runExec(parent context.Context, conn *websocket.Conn, ns, name string, q execQuery) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	defer context.AfterFunc(h.streams, cancel)()
	var mu sync.Mutex
	ready := time.Now().Add(streamsReady)
	streams := runtimeadapter.ExecStreams{TTY: q.tty}
	if q.stdout {
		streams.Stdout = wsWriter{&mu, conn, chanStdout, &ready}
	}
	if q.stderr {
		streams.Stderr = wsWriter{&mu, conn, chanStderr, &ready}
	}
	stdinR, stdinW := io.Pipe()
	if q.stdin {
		streams.Stdin = stdinR
	}
	resize := make(chan runtimeadapter.TermSize, 4)
	if q.tty {
		streams.Resize = resize
	}
	// The reader: stdin, resizes, stdin's close; the client going away
	// ends the command's context.
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer stdinW.Close()
		for {
			typ, data, err := conn.ReadMessage()
			if err != nil {
				cancel()
				return
			}
			if typ != websocket.BinaryMessage || len(data) == 0 {
				continue
			}
			switch data[0] {
			case chanStdin:
				if _, err := stdinW.Write(data[1:]); err != nil {
					continue // the command closed its input
				}
			case chanResize:
				var sz runtimeadapter.TermSize
				if json.Unmarshal(data[1:], &sz) == nil {
					select {
					case resize <- sz:
					default:
					}
				}
			case chanClose:
				if len(data) > 1 && data[1] == chanStdin {
					_ = stdinW.Close()
				}
			}
		}
	}()
	code, err := h.b.(Execer).Exec(ctx, ns, name, q.container, q.command, streams)
	_ = stdinR.Close()
	st := metav1.Status{Status: metav1.StatusSuccess}
	switch {
	case err != nil && ctx.Err() != nil:
		return // the client went
	case err != nil:
		h.log.Info("exec failed", zap.String("pod", ns+"/"+name), zap.String("container", q.container), zap.Error(err))
		st = metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError,
			Message: fmt.Sprintf("exec in container %s of pod %s/%s: %v", q.container, ns, name, err)}
	case code != 0:
		st = metav1.Status{Status: metav1.StatusFailure, Reason: "NonZeroExitCode",
			Message: fmt.Sprintf("command terminated with non-zero exit code: exit status %d", code),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: strconv.Itoa(code)}}}}
	}
	data, _ := json.Marshal(&st)
	_, _ = wsWriter{&mu, conn, chanError, &ready}.Write(data)
	mu.Lock()
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	mu.Unlock()
	// Wait (briefly) for the client's close, which ends the reader.
	select {
	case <-readDone:
	case <-time.After(2 * time.Second):
		_ = conn.Close()
		<-readDone
	}
}
