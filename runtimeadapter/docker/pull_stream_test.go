package docker

import (
	"strings"
	"testing"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestReadPullStream(t *testing.T) {
	const stream = `{"status":"Pulling from actorlet/tw","id":"1"}
{"status":"Pulling fs layer","progressDetail":{},"id":"4f4fb700ef54"}
{"status":"Downloading","progressDetail":{"current":512,"total":2048},"progress":"[===>  ]","id":"4f4fb700ef54"}
{"status":"Pull complete","progressDetail":{},"id":"4f4fb700ef54"}
{"status":"Digest: sha256:abc"}
{"status":"Status: Downloaded newer image for 127.0.0.1:5000/actorlet/tw:1"}
`
	var got []runtimeadapter.PullProgress
	if err := readPullStream(strings.NewReader(stream), func(p runtimeadapter.PullProgress) { got = append(got, p) }); err != nil {
		t.Fatal(err)
	}
	want := []runtimeadapter.PullProgress{
		{Status: "Pulling from actorlet/tw"},
		{Layer: "4f4fb700ef54", Status: "Pulling fs layer"},
		{Layer: "4f4fb700ef54", Status: "Downloading", Current: 512, Total: 2048},
		{Layer: "4f4fb700ef54", Status: "Pull complete"},
		{Status: "Digest: sha256:abc"},
		{Status: "Status: Downloaded newer image for 127.0.0.1:5000/actorlet/tw:1"},
	}
	if len(got) != len(want) {
		t.Fatalf("progress = %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d = %+v; want %+v", i, got[i], want[i])
		}
	}
	if err := readPullStream(strings.NewReader(stream), nil); err != nil {
		t.Errorf("nil progress: %v", err)
	}
}

func TestReadPullStreamErrors(t *testing.T) {
	tests := []struct {
		stream, want string
	}{
		{`{"status":"Pulling fs layer","id":"a"}` + "\n" + `{"errorDetail":{"message":"unexpected EOF"},"error":"unexpected EOF"}`, "unexpected EOF"},
		{`{"error":"only error"}`, "only error"},
		{`{"status":"Downloading"`, "read pull progress stream: unexpected EOF"},
	}
	for _, tt := range tests {
		err := readPullStream(strings.NewReader(tt.stream), nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("readPullStream(%q) = %v; want %q", tt.stream, err, tt.want)
		}
	}
}

func TestIsNotFoundMessage(t *testing.T) {
	for msg, want := range map[string]bool{
		"manifest for x:1 not found: manifest unknown: manifest unknown": true,
		"repository x not found: name unknown":                           true,
		"Get \"http://127.0.0.1:1/v2/\": connect: connection refused":    false,
		"unexpected EOF": false,
	} {
		if got := isNotFoundMessage(msg); got != want {
			t.Errorf("isNotFoundMessage(%q) = %v; want %v", msg, got, want)
		}
	}
}
