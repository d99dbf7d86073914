package taskevents

import (
	"strings"
	"testing"
	"time"

	apievents "github.com/containerd/containerd/api/events"
	"github.com/containerd/containerd/api/types"
	"github.com/containerd/typeurl/v2"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func envelope(t *testing.T, topic, ns string, v any) *types.Envelope {
	t.Helper()
	var a *anypb.Any
	if v != nil {
		any, err := typeurl.MarshalAnyToProto(v)
		if err != nil {
			t.Fatalf("marshal %T: %v", v, err)
		}
		a = any
	}
	return &types.Envelope{Topic: topic, Namespace: ns, Event: a, Timestamp: timestamppb.New(published)}
}

// published is the timestamp of the envelopes the tests make (the shim's
// publish): Decode reports it as Exit.Published.
var published = time.Date(2026, 12, 1, 22, 0, 0, 500000000, time.UTC)

func TestDecode(t *testing.T) {
	at := time.Date(2026, 12, 1, 22, 0, 0, 123456789, time.UTC)
	cases := []struct {
		name    string
		env     *types.Envelope
		kind    Kind
		want    Exit
		wantErr string
	}{
		{"init exit", envelope(t, TopicExit, "moby", &apievents.TaskExit{ContainerID: "c1", ID: "c1", Pid: 42, ExitStatus: 3, ExitedAt: timestamppb.New(at)}),
			KindExit, Exit{Namespace: "moby", ContainerID: "c1", ProcessID: "c1", Pid: 42, ExitStatus: 3, ExitedAt: at, Published: published}, ""},
		{"exec exit", envelope(t, TopicExit, "moby", &apievents.TaskExit{ContainerID: "c1", ID: "exec-9", Pid: 50, ExitStatus: 0, ExitedAt: timestamppb.New(at)}),
			KindExit, Exit{Namespace: "moby", ContainerID: "c1", ProcessID: "exec-9", Pid: 50, ExitedAt: at, Published: published}, ""},
		{"exit without time", envelope(t, TopicExit, "k8s.io", &apievents.TaskExit{ContainerID: "c2", ID: "c2", ExitStatus: 137}),
			KindExit, Exit{Namespace: "k8s.io", ContainerID: "c2", ProcessID: "c2", ExitStatus: 137, Published: published}, ""},
		{"oom", envelope(t, TopicOOM, "moby", &apievents.TaskOOM{ContainerID: "c3"}), KindOOM, Exit{Namespace: "moby", ContainerID: "c3"}, ""},
		{"other topic", envelope(t, "/tasks/start", "moby", &apievents.TaskStart{ContainerID: "c1", Pid: 1}), Other, Exit{}, ""},
		{"exit topic, start payload", envelope(t, TopicExit, "moby", &apievents.TaskStart{ContainerID: "c1"}), Other, Exit{}, "payload is *events.TaskStart"},
		{"exit without container", envelope(t, TopicExit, "moby", &apievents.TaskExit{ID: "x"}), Other, Exit{}, "no container_id"},
		{"no payload", envelope(t, TopicExit, "moby", nil), Other, Exit{}, "no payload"},
		{"garbage payload", &types.Envelope{Topic: TopicExit, Namespace: "moby", Event: &anypb.Any{TypeUrl: "containerd.events.TaskExit", Value: []byte{0xff, 0xff}}},
			Other, Exit{}, "decode containerd.events.TaskExit"},
		{"unknown type", &types.Envelope{Topic: TopicOOM, Namespace: "moby", Event: &anypb.Any{TypeUrl: "example.Nope"}}, Other, Exit{}, "decode example.Nope"},
		{"nil", nil, Other, Exit{}, "empty envelope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kind, got, err := Decode(tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if kind != tc.kind || got != tc.want {
				t.Fatalf("Decode = %v %+v, want %v %+v", kind, got, tc.kind, tc.want)
			}
		})
	}
}

func TestExitInit(t *testing.T) {
	for _, tc := range []struct {
		e    Exit
		init bool
	}{
		{Exit{ContainerID: "c", ProcessID: "c"}, true},
		{Exit{ContainerID: "c"}, true},
		{Exit{ContainerID: "c", ProcessID: "e1"}, false},
	} {
		if got := tc.e.Init(); got != tc.init {
			t.Errorf("%+v.Init() = %v, want %v", tc.e, got, tc.init)
		}
	}
}

func TestFilters(t *testing.T) {
	got := Filters("moby")
	want := []string{`topic=="/tasks/exit",namespace=="moby"`, `topic=="/tasks/oom",namespace=="moby"`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Filters = %q, want %q", got, want)
	}
}
