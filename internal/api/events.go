package api

import (
	"fmt"
	"net/http"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/messages"
)

// eventComponent is the source and reporting controller of every event.
const eventComponent = "actorlet"

// events serves GET /events: the recent events as a v1.EventList, newest
// last. Repeats of one event (same object, container, type, reason and
// message) are folded into one item with a count and first and last
// timestamps, as Kubernetes' event correlator does; the item sits where
// its last occurrence was.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	evs, err := h.b.Events(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, eventList(evs))
}

// eventKey identifies repeats of one event.
type eventKey struct {
	namespace, pod string
	uid            types.UID
	container      string
	typ            messages.EventType
	reason         string
	message        string
}

// eventList renders events (oldest first) as a Kubernetes v1.EventList,
// newest last, folding repeats (see the /events endpoint).
func eventList(evs []messages.Event) *v1.EventList {
	last := make(map[eventKey]int, len(evs))
	first := make(map[eventKey]int, len(evs))
	count := make(map[eventKey]int32, len(evs))
	for i, e := range evs {
		k := keyOf(e)
		if _, ok := first[k]; !ok {
			first[k] = i
		}
		last[k] = i
		count[k]++
	}
	list := &v1.EventList{
		TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"},
		Items:    make([]v1.Event, 0, len(last)),
	}
	for i, e := range evs {
		k := keyOf(e)
		if last[k] != i {
			continue
		}
		list.Items = append(list.Items, kubeEvent(evs[first[k]], e, count[k]))
	}
	return list
}

func keyOf(e messages.Event) eventKey {
	return eventKey{e.Namespace, e.Pod, e.UID, e.Container, e.Type, e.Reason, e.Message}
}

// kubeEvent renders the occurrences first … last (count of them) of one
// event as a core/v1 Event about its pod.
func kubeEvent(first, last messages.Event, count int32) v1.Event {
	ref := v1.ObjectReference{
		Kind:       "Pod",
		APIVersion: "v1",
		Namespace:  last.Namespace,
		Name:       last.Pod,
		UID:        last.UID,
	}
	if last.Container != "" {
		ref.FieldPath = fmt.Sprintf("spec.containers{%s}", last.Container)
	}
	return v1.Event{
		TypeMeta: metav1.TypeMeta{Kind: "Event", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			// <object>.<hex nanoseconds>, as Kubernetes names events.
			Name:              fmt.Sprintf("%s.%x", last.Pod, first.Time.UnixNano()),
			Namespace:         last.Namespace,
			CreationTimestamp: metav1.NewTime(first.Time),
		},
		InvolvedObject:      ref,
		Reason:              last.Reason,
		Message:             last.Message,
		Source:              v1.EventSource{Component: eventComponent},
		FirstTimestamp:      metav1.NewTime(first.Time),
		LastTimestamp:       metav1.NewTime(last.Time),
		Count:               count,
		Type:                string(last.Type),
		ReportingController: eventComponent,
	}
}

// EventList renders the node's events (oldest first) as a v1.EventList,
// folding repeats as /events does; the Kubernetes API (internal/kubeapi)
// serves the same items.
func EventList(evs []messages.Event) *v1.EventList { return eventList(evs) }
