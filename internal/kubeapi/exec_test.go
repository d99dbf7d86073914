package kubeapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestKubectlExec(t *testing.T) {
	kubectlPath(t)
	fb := &fakeBackend{health: api.Health{OK: true}}
	fb.setPods(runningPod("default", "web", nil))
	url, _ := serveWrites(t, fb, true)
	auth := []string{"--insecure-skip-tls-verify", "--token", testToken}
	k := func(args ...string) (string, string, int) { return kubectl(t, url, append(auth, args...)...) }

	if out, errOut, code := k("exec", "web", "--", "echo", "hello", "world"); code != 0 || out != "hello world\n" {
		t.Fatalf("exec echo: exit %d, %q %q", code, out, errOut)
	}
	if out, errOut, code := k("exec", "web", "--", "exit", "3"); code != 3 || !strings.Contains(errOut, "command terminated with exit code 3") {
		t.Fatalf("exec exit 3: exit %d, %q %q; want kubectl to exit 3", code, out, errOut)
	}
	if _, errOut, code := k("exec", "web", "--", "nope"); code != 1 || !strings.Contains(errOut, `"nope": executable file not found`) {
		t.Fatalf("exec of a missing command: exit %d, %q", code, errOut)
	}
	// stdin, to its end.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := kubectlCmd(ctx, t, url, append(auth, "exec", "-i", "web", "--", "cat")...)
	cmd.Stdin = strings.NewReader("piped through\n")
	out, err := cmd.Output()
	if err != nil || string(out) != "piped through\n" {
		var ee *exec.ExitError
		if e, ok := err.(*exec.ExitError); ok {
			ee = e
		}
		t.Fatalf("exec -i cat: %v %q %v", err, out, ee)
	}
	// Without credentials, exec is refused like a write.
	if _, errOut, code := kubectl(t, url, "--insecure-skip-tls-verify", "--token", "wrong", "exec", "web", "--", "echo"); code != 1 || !strings.Contains(errOut, "You must be logged in") {
		t.Fatalf("exec with a wrong token: exit %d, %q", code, errOut)
	}
}

func TestExecRefusesForeignOrigin(t *testing.T) {
	fb := &fakeBackend{health: api.Health{OK: true}}
	fb.setPods(runningPod("default", "web", nil))
	url, _ := serveWrites(t, fb, true)
	wsURL := "wss" + strings.TrimPrefix(url, "https") + "/api/v1/namespaces/default/pods/web/exec?command=echo&command=hi&stdout=true"
	d := websocket.Dialer{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, Subprotocols: []string{protoV5}}
	header := http.Header{"Authorization": {"Bearer " + testToken}, "Origin": {"https://evil.example"}}
	_, resp, err := d.Dial(wsURL, header)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("exec from a foreign origin: %v %v, want 403", err, resp)
	}
	resp.Body.Close()
	// The same request from no origin (kubectl) is served: stdout, then a
	// Success status on the error channel.
	header.Del("Origin")
	conn, resp, err := d.Dial(wsURL, header)
	if err != nil {
		t.Fatalf("exec: %v %v", err, resp)
	}
	defer conn.Close()
	if conn.Subprotocol() != protoV5 {
		t.Fatalf("subprotocol %q, want %s", conn.Subprotocol(), protoV5)
	}
	var got []string
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			break
		}
		got = append(got, string(rune('0'+msg[0]))+":"+string(msg[1:]))
	}
	if want := `[1:hi
 3:{"metadata":{},"status":"Success"}]`; strings.Join([]string{"[", strings.Join(got, " "), "]"}, "") != want {
		t.Fatalf("messages %q, want %s", got, want)
	}
}

// With a TTY, stderr is not asked for, the command is told it has one, and
// resizes reach it.
func TestExecTTY(t *testing.T) {
	fb := &ttyBackend{fakeBackend: &fakeBackend{health: api.Health{OK: true}}, sizes: make(chan string, 1)}
	fb.setPods(runningPod("default", "web", nil))
	url, _ := serveWritesOver(t, fb, fb.fakeBackend)
	wsURL := "wss" + strings.TrimPrefix(url, "https") + "/api/v1/namespaces/default/pods/web/exec?command=tty&stdin=true&stdout=true&stderr=true&tty=true"
	d := websocket.Dialer{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, Subprotocols: []string{protoV5}}
	conn, resp, err := d.Dial(wsURL, http.Header{"Authorization": {"Bearer " + testToken}})
	if err != nil {
		t.Fatalf("exec: %v %v", err, resp)
	}
	defer conn.Close()
	if err := conn.WriteMessage(websocket.BinaryMessage, append([]byte{chanResize}, `{"Width":120,"Height":40}`...)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-fb.sizes:
		if got != "tty=true stderr=false 120x40" {
			t.Fatalf("the command saw %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no resize reached the command")
	}
	_ = conn.WriteMessage(websocket.BinaryMessage, []byte{chanClose, chanStdin})
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("no Success status before the end: %v", err)
		}
		if msg[0] == chanError {
			if string(msg[1:]) != `{"metadata":{},"status":"Success"}` {
				t.Fatalf("status %s", msg[1:])
			}
			return
		}
	}
}

// ttyBackend's Exec reports its TTY and first resize, then waits for
// stdin's end.
type ttyBackend struct {
	*fakeBackend
	sizes chan string
}

func (b *ttyBackend) Exec(ctx context.Context, ns, pod, ctr string, cmd []string, s runtimeadapter.ExecStreams) (int, error) {
	select {
	case sz := <-s.Resize:
		b.sizes <- fmt.Sprintf("tty=%v stderr=%v %dx%d", s.TTY, s.Stderr != nil, sz.Width, sz.Height)
	case <-ctx.Done():
		return -1, ctx.Err()
	}
	_, _ = io.Copy(io.Discard, s.Stdin)
	return 0, nil
}
