package dockerproxy

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// RuleID names a rule added with Proxy.Add; IDs start at 1.
type RuleID int64

// Rule is one fault: it applies to the requests whose method, path and
// (when set) container match, the first Times of them (0: every one until
// the rule is removed). Of several active rules that match a request, the
// one added first applies; a request gets at most one fault.
type Rule struct {
	// Method is the HTTP method ("GET", "POST", ...); empty matches any.
	Method string
	// Path is a path pattern without the API version prefix (see
	// StripVersion), e.g. "/containers/json", "/containers/{id}/stop",
	// "/images/**". A segment "*" or "{...}" matches any one segment; a
	// last segment "**" matches whatever follows (nothing included). The
	// query string is not part of the match. Empty matches every path.
	Path string
	// Container, when set, narrows the rule to requests about a container
	// whose ID or name contains it: the name query parameter of
	// POST /containers/create, or the {id} of /containers/{id}/...; an ID
	// in the path is resolved to the container's name by inspecting it on
	// the daemon directly (once per ID; not seen by rules or counts).
	// Requests that name no container never match.
	Container string
	// Fault is what happens to a matching request.
	Fault Fault
	// Times is how many requests the rule applies to; 0 or less: until
	// removed.
	Times int
}

// Fault is what a rule does to a request: see Delay, Hang, Error, Drop,
// DropAfter and Mute.
type Fault struct {
	kind   faultKind
	delay  time.Duration
	status int
	body   string
}

type faultKind int

const (
	faultNone faultKind = iota
	faultDelay
	faultHang
	faultError
	faultDrop
	faultDropAfter
	faultMute
)

func (k faultKind) String() string {
	switch k {
	case faultDelay:
		return "delay"
	case faultHang:
		return "hang"
	case faultError:
		return "error"
	case faultDrop:
		return "drop"
	case faultDropAfter:
		return "drop-after"
	case faultMute:
		return "mute"
	default:
		return ""
	}
}

// String names the fault: "delay 2s", "hang", "error 500", "drop",
// "drop-after 0s", "mute".
func (f Fault) String() string {
	switch f.kind {
	case faultDelay, faultDropAfter:
		return f.kind.String() + " " + f.delay.String()
	case faultError:
		return "error " + strconv.Itoa(f.status)
	default:
		return f.kind.String()
	}
}

// Delay holds the request for d, then forwards it. A client that gives up
// meanwhile is dropped and the request never reaches the daemon; removing
// the rule forwards the requests it holds at once.
func Delay(d time.Duration) Fault { return Fault{kind: faultDelay, delay: d} }

// Hang holds the request until the client gives up (the request never
// reaches the daemon) or the rule is removed (it is then forwarded, as a
// daemon that was stuck and answers again).
func Hang() Fault { return Fault{kind: faultHang} }

// Error answers the request itself with status and body. A body that is
// not a JSON object is sent as Docker's error document,
// {"message": body}, so the Docker client reports it as the message; an
// empty body says the error was injected.
func Error(status int, body string) Fault { return Fault{kind: faultError, status: status, body: body} }

// Drop closes the client's connection without an answer, as a daemon that
// died. (Go's HTTP client retries an idempotent request once, on a new
// connection, when a reused connection closes before any answer: a Drop
// with Times 1 may then go unnoticed by the client.)
func Drop() Fault { return Fault{kind: faultDrop} }

// DropAfter forwards the request and closes the client's connection d
// after the daemon's answer reached it (its header, or the switch of an
// upgraded connection): a stream (events, logs, attach) breaks mid-way,
// and the client sees an unexpected end of its response.
func DropAfter(d time.Duration) Fault { return Fault{kind: faultDropAfter, delay: d} }

// Mute forwards the request and passes the daemon's answer header on, but
// none of its body: the proxy reads the body and drops it. A stream
// (events, logs) stays open and delivers nothing, with no error, until
// the client gives up, the proxy aborts it or the daemon ends it; as a
// stream stuck somewhere between the daemon and its reader. Removing the
// rule does not unmute a request it applied to. An upgraded connection
// (101 Switching Protocols) is not muted.
func Mute() Fault { return Fault{kind: faultMute} }

// versionPrefix is Docker's API version prefix: /v1.41/...
var versionPrefix = regexp.MustCompile(`^/v[0-9]+(\.[0-9]+)*(/|$)`)

// StripVersion removes the API version prefix from a Docker API path:
// "/v1.41/containers/json" → "/containers/json". Paths without one are
// returned as they are.
func StripVersion(path string) string {
	loc := versionPrefix.FindStringIndex(path)
	if loc == nil {
		return path
	}
	return "/" + path[loc[1]:]
}

// pattern is a parsed path pattern with an optional method.
type pattern struct {
	method string
	segs   []string // nil: any path
}

// parsePattern reads "METHOD /path/pattern", "/path/pattern" (see
// Rule.Path) or "METHOD"; an empty string matches everything.
func parsePattern(s string) pattern {
	s = strings.TrimSpace(s)
	var p pattern
	if i := strings.IndexByte(s, ' '); i >= 0 {
		p.method, s = strings.ToUpper(s[:i]), strings.TrimSpace(s[i+1:])
	} else if s != "" && !strings.HasPrefix(s, "/") {
		p.method, s = strings.ToUpper(s), "" // a method alone
	}
	if s != "" {
		p.segs = splitPath(s)
	}
	return p
}

func newPattern(method, path string) pattern {
	p := pattern{method: strings.ToUpper(method)}
	if path != "" {
		p.segs = splitPath(path)
	}
	return p
}

func splitPath(s string) []string {
	s = strings.Trim(s, "/")
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "/")
}

// match reports whether a request (its unversioned path) matches.
func (p pattern) match(method, path string) bool {
	if p.method != "" && !strings.EqualFold(p.method, method) {
		return false
	}
	if p.segs == nil {
		return true
	}
	return matchSegs(p.segs, splitPath(path))
}

func matchSegs(pat, path []string) bool {
	for i, s := range pat {
		if s == "**" && i == len(pat)-1 {
			return true
		}
		if i >= len(path) {
			return false
		}
		wild := s == "*" || (strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"))
		if wild {
			if path[i] == "" {
				return false
			}
			continue
		}
		if s != path[i] {
			return false
		}
	}
	return len(pat) == len(path)
}

// containerRef is the container a request names: the name query parameter
// of a create, else the {id} of /containers/{id}/... ("" when none).
func containerRef(path string, query func(string) string) (ref string, byName bool) {
	segs := splitPath(path)
	if len(segs) < 2 || segs[0] != "containers" {
		return "", false
	}
	switch segs[1] {
	case "create":
		return query("name"), true
	case "json", "prune", "":
		return "", false
	}
	return segs[1], false
}
