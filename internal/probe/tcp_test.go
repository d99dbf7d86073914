package probe

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestTCPSocket(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	open := l.Addr().(*net.TCPAddr).Port
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name string
		ctx  context.Context
		host string
		port int
		want Result
	}{
		{"listening", context.Background(), "127.0.0.1", open, Success},
		{"closed port", context.Background(), "127.0.0.1", closedPort(t), Failure},
		{"cancelled", cancelled, "127.0.0.1", open, Unknown},
		{"no host", context.Background(), "", open, Unknown},
	}
	for _, tt := range tests {
		if r, out := TCPSocket(tt.ctx, tt.host, tt.port, time.Second); r != tt.want {
			t.Errorf("%s: %v %q, want %v", tt.name, r, out, tt.want)
		}
	}
}

// TestTCPSocketTimeout dials an address that does not answer (TEST-NET-1):
// the connection times out, or fails at once where there is no route;
// either way the probe fails, within its timeout.
func TestTCPSocketTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	start := time.Now()
	r, out := TCPSocket(context.Background(), "192.0.2.1", 9, timeout)
	if r != Failure {
		t.Fatalf("%v %q, want Failure", r, out)
	}
	if took := time.Since(start); took > timeout+2*time.Second {
		t.Errorf("took %v, want at most about %v", took, timeout)
	}
}
