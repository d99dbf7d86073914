package url

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/sources"
)

// These tests run the Source against a local httptest server, polling
// every testPeriod. They never sleep: they wait for updates and for the
// server's requests, with a deadline.

func TestNew(t *testing.T) {
	tests := []struct {
		url      string
		opts     []Option
		wantName string
		wantErr  string
	}{
		{url: "http://config.example.com/pods.yaml", wantName: "http:http://config.example.com/pods.yaml"},
		{url: "HTTPS://config.example.com:8443/pods", wantName: "http:https://config.example.com:8443/pods"},
		{url: "https://user:secret@config.example.com/pods#frag", wantName: "http:https://config.example.com/pods"},
		{url: "https://h/pods?node=a&token=s3cr3t&X-Amz-Signature=abc&api_key=k&flag", wantName: "http:https://h/pods?node=a&token=REDACTED&X-Amz-Signature=REDACTED&api_key=REDACTED&flag"},
		{url: "https://h/pods?%74oken=s3cr3t", wantName: "http:https://h/pods?%74oken=REDACTED"},

		{url: "ftp://h/pods", wantErr: `manifest URL ftp://h/pods: scheme "ftp" is not http or https`},
		{url: "/etc/pods.yaml", wantErr: `scheme "" is not http or https`},
		{url: "config.example.com/pods", wantErr: `scheme "" is not http or https`},
		{url: "http:///pods", wantErr: "manifest URL http:///pods: no host"},
		{url: "http://user:secret@h:port/", wantErr: "invalid manifest URL: invalid port"},
		{url: "http://h/", opts: []Option{WithHeader("Bad Name", "v")}, wantErr: `manifest URL http://h/: header name "Bad Name" is not valid`},
		{url: "http://h/", opts: []Option{WithHeader("", "v")}, wantErr: `header name "" is not valid`},
		{url: "http://h/", opts: []Option{WithHeader("X-A", "a\r\nX-B: b")}, wantErr: "header X-A: value contains a CR, LF or NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			s, err := New(tt.url, testNode, tt.opts...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New = %v, want error %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("error %q shows the credentials", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := s.Name(); got != tt.wantName {
				t.Errorf("Name = %q, want %q", got, tt.wantName)
			}
		})
	}
}

func TestRunSinglePod(t *testing.T) {
	for name, body := range map[string]string{"yaml": podYAML("web", "nginx:1.25"), "json": podJSON("web", "nginx:1.25")} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, response{body: body})
			r := start(t, srv.URL+"/pods")
			u := r.next(t)
			wantPods(t, u, "default/web=nginx:1.25")
			if u.Source != "http:"+srv.URL+"/pods" {
				t.Errorf("Source = %q", u.Source)
			}
			if p := u.Pods[0]; p.UID == "" || p.Annotations[AnnotationSourceURL] != srv.URL+"/pods" || p.Annotations["kubernetes.io/config.source"] != "http" {
				t.Errorf("pod UID %q, annotations %v", p.UID, p.Annotations)
			}
		})
	}
}

func TestRunPodListAndStableUIDs(t *testing.T) {
	srv := newServer(t, response{body: podList(item("web", "nginx:1"), item("api", "api:1"))})
	r := start(t, srv.URL)
	u := r.next(t)
	wantPods(t, u, "default/web=nginx:1", "default/api=api:1")
	web, api := u.Pods[0].UID, u.Pods[1].UID

	// Unchanged for several polls: nothing more is sent.
	srv.waitRequests(t, srv.count()+3)
	if got := r.drain(); len(got) != 0 {
		t.Fatalf("got %d updates for an unchanged response: %s", len(got), describe(got[0]))
	}

	srv.set(response{body: podList(item("web", "nginx:2"), item("api", "api:1"))})
	u = r.next(t)
	wantPods(t, u, "default/web=nginx:2", "default/api=api:1")
	if u.Pods[0].UID == web || u.Pods[1].UID != api {
		t.Errorf("after editing web: UIDs web %s→%s, api %s→%s", web, u.Pods[0].UID, api, u.Pods[1].UID)
	}
}

func TestRunEmptyPodList(t *testing.T) {
	srv := newServer(t, response{body: podList()})
	r := start(t, srv.URL)
	u := r.next(t) // sent although empty: the source has synced
	wantPods(t, u)
	wantProblems(t, u)
}

func TestRunHeaders(t *testing.T) {
	srv := newServer(t, response{body: podList()})
	r := start(t, srv.URL+"/pods?node=n1",
		WithHeader("Authorization", "Bearer s3cr3t"),
		WithHeader("x-multi", "a"), WithHeader("X-Multi", "b"),
		WithHeader("Host", "config.example.com"))
	r.next(t)
	srv.waitRequests(t, 2) // headers are sent on every poll
	for i := range 2 {
		req := srv.request(i)
		if got := req.Header.Get("Authorization"); got != "Bearer s3cr3t" {
			t.Errorf("request %d: Authorization = %q", i, got)
		}
		if got := req.Header.Values("X-Multi"); strings.Join(got, ",") != "a,b" {
			t.Errorf("request %d: X-Multi = %q, want a, b", i, got)
		}
		if req.Host != "config.example.com" {
			t.Errorf("request %d: Host = %q", i, req.Host)
		}
		if req.URL.RawQuery != "node=n1" || req.Method != http.MethodGet {
			t.Errorf("request %d: %s %s", i, req.Method, req.URL)
		}
		if ua := req.Header.Get("User-Agent"); !strings.HasPrefix(ua, "actorlet/") {
			t.Errorf("request %d: User-Agent = %q", i, ua)
		}
	}
	if strings.Contains(r.src.Name(), "s3cr3t") {
		t.Errorf("Name %q shows a header", r.src.Name())
	}

	// A header overrides the default User-Agent; userinfo is sent as basic auth.
	srv2 := newServer(t, response{body: podList()})
	r2 := start(t, strings.Replace(srv2.URL, "://", "://me:pw@", 1), WithHeader("User-Agent", "mine"))
	r2.next(t)
	req := srv2.request(0)
	if user, pw, ok := req.BasicAuth(); !ok || user != "me" || pw != "pw" {
		t.Errorf("basic auth = %q, %q, %v", user, pw, ok)
	}
	if ua := req.Header.Get("User-Agent"); ua != "mine" {
		t.Errorf("User-Agent = %q, want mine", ua)
	}
	if strings.Contains(r2.src.Name(), "pw") {
		t.Errorf("Name %q shows the password", r2.src.Name())
	}
}

// TestRunFailureKeepsLastSet runs each kind of failing response after a
// good one: Err is sent once, naming the URL and the cause, no update
// empties the set, and the same good response afterwards is sent again.
func TestRunFailureKeepsLastSet(t *testing.T) {
	tests := []struct {
		name string
		resp response
		opts []Option
		want string
	}{
		{"500", response{status: 500, body: "oops"}, nil, ": HTTP status 500 Internal Server Error"},
		{"404", response{status: 404}, nil, ": HTTP status 404 Not Found"},
		{"malformed", response{body: `{"apiVersion": "v1", "kind": "Pod", `}, nil, ": invalid manifest: want one Pod or PodList object: unexpected end of JSON input"},
		{"html", response{body: "<html>502 Bad Gateway</html>"}, nil, ": invalid manifest: want one Pod or PodList object"},
		{"empty", response{body: ""}, nil, ": empty manifest: want one Pod or PodList"},
		{"wrong kind", response{body: "apiVersion: v1\nkind: Deployment\n"}, nil, `: kind: Unsupported value: "Deployment"`},
		{"unknown list field", response{body: `{"apiVersion": "v1", "kind": "PodList", "itemz": []}`}, nil, `: unknown field "itemz"`},
		{"too large", response{body: strings.Repeat("#", 1001)}, []Option{withMaxBody(1000)}, ": body is over the 1000-byte limit"},
		{"timeout", response{hang: true}, []Option{WithHTTPClient(&http.Client{Timeout: 20 * time.Millisecond})}, ": GET: context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := podList(item("web", "nginx"))
			srv := newServer(t, response{body: good})
			r := start(t, srv.URL+"/pods", tt.opts...)
			wantPods(t, r.next(t), "default/web=nginx")

			n := srv.set(tt.resp)
			srv.waitRequests(t, n+4) // three failed polls have ended
			got := r.drain()
			if len(got) != 1 {
				for _, u := range got {
					t.Logf("update %s", describe(u))
				}
				t.Fatalf("got %d updates for three equal failures, want 1", len(got))
			}
			u := got[0]
			if u.Err == nil || u.Pods != nil || u.Source != r.src.Name() {
				t.Fatalf("update = %s, want Err only", describe(u))
			}
			if want := "manifest URL " + srv.URL + "/pods" + tt.want; !strings.HasPrefix(u.Err.Error(), want) {
				t.Errorf("Err = %q, want prefix %q", u.Err, want)
			}
			st := r.src.Stats()
			if st.Failures < 3 || st.LastError == nil || st.LastError.Error() != u.Err.Error() || st.LastSuccess.IsZero() {
				t.Errorf("Stats = %+v during the failure", st)
			}

			n = srv.set(response{body: good})
			wantPods(t, r.next(t), "default/web=nginx") // the recovery is sent, though nothing changed
			srv.waitRequests(t, n+3)
			if got := r.drain(); len(got) != 0 {
				t.Errorf("got %d more updates after the recovery", len(got))
			}
			if st := r.src.Stats(); st.LastError != nil {
				t.Errorf("LastError = %v after the recovery", st.LastError)
			}
		})
	}
}

// withMaxBody lowers the body size limit (maxBodyBytes, 10 MiB) to n bytes.
func withMaxBody(n int) Option { return func(s *Source) { s.maxBody = n } }

func TestMaxBodyDefault(t *testing.T) {
	s, err := New("http://h/", testNode)
	if err != nil {
		t.Fatal(err)
	}
	if s.maxBody != 10<<20 {
		t.Errorf("maxBody = %d, want 10 MiB", s.maxBody)
	}
}

func TestRunConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := start(t, "http://"+addr+"/pods")
	u := r.next(t)
	if u.Err == nil || !strings.HasPrefix(u.Err.Error(), "manifest URL http://"+addr+"/pods: GET: ") || !strings.Contains(u.Err.Error(), "refused") {
		t.Errorf("update = %s, want a refused connection", describe(u))
	}
}

func TestRunInvalidItemAndUnknownField(t *testing.T) {
	srv := newServer(t, response{body: podList(item("web", "nginx:1"), item("api", "api:1"))})
	r := start(t, srv.URL)
	wantPods(t, r.next(t), "default/web=nginx:1", "default/api=api:1")

	srv.set(response{body: podList(
		item("web", "nginx:2"),
		`{"metadata": {"name": "api"}, "spec": {"containers": [{"name": "app", "image": "api:2", "imagePullPolicyy": "Always"}]}}`,
		item("db", ""))})
	u := r.next(t)
	wantPods(t, u, "default/web=nginx:2", "default/api=api:1")
	wantProblems(t, u,
		[]string{"manifest " + srv.URL + ": ", `unknown field "items[1].spec.containers[0].imagePullPolicyy"`},
		[]string{"manifest " + srv.URL + ": ", "items[2].spec.containers[0].image: Required value"},
	)
	if st := r.src.Stats(); st.Failures != 0 || st.LastError != nil {
		t.Errorf("Stats = %+v: problems are not failures", st)
	}
}

func TestRunDuplicateNames(t *testing.T) {
	srv := newServer(t, response{body: podList(item("web", "nginx:first"), item("web", "nginx:second"))})
	r := start(t, srv.URL)
	u := r.next(t)
	wantPods(t, u, "default/web=nginx:first")
	wantProblems(t, u, []string{srv.URL, "items[1]: pod default/web is also defined by items[0]"})
}

func TestRunStats(t *testing.T) {
	srv := newServer(t, response{body: podList()})
	begin := time.Now()
	r := start(t, srv.URL)
	r.next(t)

	// Read Stats concurrently with Run (for the race detector).
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			_ = r.src.Stats()
		}
	}()

	n := srv.set(response{status: 503})
	srv.waitRequests(t, n+3) // polls n+1 and n+2 failed
	<-done
	st := r.src.Stats()
	if st.Polls < int64(n+2) || st.Failures < 2 || st.Failures > st.Polls || st.LastError == nil ||
		!strings.Contains(st.LastError.Error(), "503") || st.LastSuccess.Before(begin) {
		t.Errorf("Stats = %+v after %d good and 2+ failed polls", st, n)
	}
	successes := st.Polls - st.Failures

	n = srv.set(response{body: podList()})
	srv.waitRequests(t, n+2)
	st2 := r.src.Stats()
	if st2.LastError != nil || st2.Failures < st.Failures || st2.Polls-st2.Failures <= successes || !st2.LastSuccess.After(st.LastSuccess) {
		t.Errorf("Stats = %+v after the recovery (before: %+v)", st2, st)
	}
}

func TestRunCancelEndsPromptly(t *testing.T) {
	for name, resp := range map[string]response{
		"between polls":    {body: podList()},
		"during a request": {hang: true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, resp)
			src, err := New(srv.URL, testNode, WithPeriod(time.Hour)) // default 10 s timeout
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			updates := make(chan sources.Update, 10)
			done := make(chan error, 1)
			go func() { done <- src.Run(ctx, func(u sources.Update) { updates <- u }) }()
			srv.waitRequests(t, 1)
			if !resp.hang {
				<-updates // the poll ended; Run waits for the next period
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v, want nil", err)
				}
			case <-time.After(time.Second):
				t.Fatal("Run did not return within 1s of the cancel")
			}
			if len(updates) != 0 {
				t.Errorf("an update was sent for the cancelled poll: %s", describe(<-updates))
			}
			if st := src.Stats(); resp.hang && st.Polls != 0 {
				t.Errorf("Stats = %+v: a cancelled poll is not counted", st)
			}
		})
	}
}

func TestRunWithDefaultOptions(t *testing.T) {
	// New with only a URL: a real period of 20 s, so one poll.
	srv := newServer(t, response{body: podYAML("web", "nginx")})
	src, err := New(srv.URL, testNode)
	if err != nil {
		t.Fatal(err)
	}
	if src.period != DefaultPeriod || src.client.Timeout != DefaultTimeout {
		t.Errorf("period %v, timeout %v", src.period, src.client.Timeout)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan sources.Update, 1)
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, func(u sources.Update) { got <- u }) }()
	select {
	case u := <-got:
		wantPods(t, u, "default/web=nginx")
	case <-time.After(slack):
		t.Fatal("no first update")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}
