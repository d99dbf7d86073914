// Package rawhttp sends hostile request targets verbatim, for tests of a
// server's path checks: no client library cleans or re-encodes them.
package rawhttp

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// Timeout bounds one request.
const Timeout = 10 * time.Second

// Get sends "GET target HTTP/1.1" with header on conn, which it closes,
// and returns the answer's status code.
func Get(t testing.TB, conn net.Conn, target string, header http.Header) int {
	t.Helper()
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(Timeout))
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n", target)
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(w, "%s: %s\r\n", k, v)
		}
	}
	w.WriteString("\r\n")
	if err := w.Flush(); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
