package nodeapi

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/messages"
)

func trackedPod(name string, grace int64) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace}}
}

// summary renders pods as name(terminating since N s).
func summary(pods []*v1.Pod, t0 time.Time) string {
	var out []string
	for _, p := range pods {
		s := p.Name
		if p.DeletionTimestamp != nil {
			s += fmt.Sprintf("(terminating since %.0fs)", p.DeletionTimestamp.Sub(t0).Seconds())
		}
		out = append(out, s)
	}
	return fmt.Sprint(out)
}

func TestTrackerShowsStoppingPodsTerminating(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := &Tracker{ch: make(chan struct{}, 1), last: map[types.UID]*v1.Pod{}, gone: map[types.UID]time.Time{}}
	web, db := trackedPod("web", 30), trackedPod("db", 1)
	steps := []struct {
		at      time.Duration
		present []*v1.Pod
		removed string // a Removed report before this step
		want    string
	}{
		{0, []*v1.Pod{web, db}, "", "[web db]"},
		{time.Second, []*v1.Pod{web}, "", "[web db(terminating since 1s)]"},
		{2 * time.Second, []*v1.Pod{web}, "", "[web db(terminating since 1s)]"},
		{3 * time.Second, []*v1.Pod{web}, "uid-db", "[web]"},
		{4 * time.Second, nil, "", "[web(terminating since 4s)]"},
		// Never reported stopped: dropped after its grace (30 s) and 2 min.
		{4*time.Second + 30*time.Second + lingerAfterGrace + time.Second, nil, "", "[]"},
	}
	for i, st := range steps {
		if st.removed != "" {
			tr.observe(&messages.PodStatusChanged{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(st.removed)}}, Removed: true})
		}
		if got := summary(tr.withTerminating(st.present, t0.Add(st.at)), t0); got != st.want {
			t.Fatalf("step %d: %s, want %s", i, got, st.want)
		}
	}
}
