package probe

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"
)

// TCPSocket probes by opening a TCP connection to host:port within
// timeout (timeout <= 0: only ctx bounds it) and closing it at once:
// Success if it opens, Failure otherwise (refused, unreachable, timed
// out), with the error's text as output. Unknown means the probe could
// not be made: no host, or ctx was cancelled (the probe was abandoned, not
// failed).
func TCPSocket(ctx context.Context, host string, port int, timeout time.Duration) (Result, string) {
	if host == "" {
		return Unknown, "tcpSocket probe: no host to probe"
	}
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return Unknown, "probe cancelled: " + err.Error()
		}
		return Failure, err.Error()
	}
	_ = conn.Close()
	return Success, ""
}
