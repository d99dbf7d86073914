package kubeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

const tableContentType = "application/json;as=Table;v=v1;g=meta.k8s.io"

// Columns of the tables kubectl prints, as the API server defines them
// (priority 1: only with -o wide).
var (
	podColumns = []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name of the pod"},
		{Name: "Ready", Type: "string", Description: "Ready containers of the pod, of all its containers"},
		{Name: "Status", Type: "string", Description: "The pod's status, as kubectl shows it"},
		{Name: "Restarts", Type: "string", Description: "Restarts of the pod's containers, and how long ago the last one was"},
		{Name: "Age", Type: "string", Description: "Time since the pod started on this node"},
		{Name: "IP", Type: "string", Priority: 1, Description: "The pod's IP address"},
		{Name: "Node", Type: "string", Priority: 1, Description: "The node the pod runs on"},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: "Unused on one node"},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: "Readiness gates met, of all"},
	}
	nodeColumns = []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name of the node"},
		{Name: "Status", Type: "string", Description: "Ready or NotReady"},
		{Name: "Roles", Type: "string", Description: "The node's roles"},
		{Name: "Age", Type: "string", Description: "Time since the agent started"},
		{Name: "Version", Type: "string", Description: "The agent's version"},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: "The node's addresses"},
		{Name: "External-IP", Type: "string", Priority: 1, Description: "External addresses"},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: "Operating system"},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: "Kernel version"},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: "Container runtime and version"},
	}
	eventColumns = []metav1.TableColumnDefinition{
		{Name: "Last Seen", Type: "string", Description: "Time since the last occurrence"},
		{Name: "Type", Type: "string", Description: "Normal or Warning"},
		{Name: "Reason", Type: "string", Description: "Why the event happened"},
		{Name: "Object", Type: "string", Description: "What it is about"},
		{Name: "Message", Type: "string", Description: "What happened"},
		{Name: "Subobject", Type: "string", Priority: 1, Description: "The part of the object"},
		{Name: "Source", Type: "string", Priority: 1, Description: "Who reported it"},
		{Name: "First Seen", Type: "string", Priority: 1, Description: "Time since the first occurrence"},
		{Name: "Count", Type: "string", Priority: 1, Description: "Occurrences"},
		{Name: "Name", Type: "string", Priority: 1, Description: "Name of the event"},
	}
)

// table renders objs of res as a metav1.Table; includeObject is the
// request's (None, Object, or Metadata, the default).
func (h *Handler) table(res resource, objs []runtime.Object, includeObject string) (*metav1.Table, error) {
	switch includeObject {
	case "", "Metadata", "Object", "None":
	default:
		return nil, errBadRequest("invalid includeObject %q: want None, Metadata or Object", includeObject)
	}
	now := h.now()
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"}, Rows: []metav1.TableRow{}}
	switch res {
	case resPods:
		t.ColumnDefinitions = podColumns
	case resNodes:
		t.ColumnDefinitions = nodeColumns
	default:
		t.ColumnDefinitions = eventColumns
	}
	for _, o := range objs {
		var row metav1.TableRow
		switch x := o.(type) {
		case *v1.Pod:
			row = podRow(x, now)
		case *v1.Node:
			row = nodeRow(x, now)
		case *v1.Event:
			row = eventRow(x, now)
		}
		var embed runtime.Object
		switch includeObject {
		case "None":
		case "Object":
			embed = o
		default:
			embed = &metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"},
				ObjectMeta: objectMeta(o),
			}
		}
		if embed != nil {
			raw, err := json.Marshal(embed)
			if err != nil {
				return nil, fmt.Errorf("encoding a table row: %w", err)
			}
			row.Object = runtime.RawExtension{Raw: raw}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

func writeTable(w http.ResponseWriter, t *metav1.Table) {
	data, err := json.Marshal(t)
	if err != nil {
		writeStatus(w, errInternal(err))
		return
	}
	w.Header().Set("Content-Type", tableContentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(data, '\n'))
}

// age renders the time since t as kubectl does ("<unknown>" when unset).
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// podRow is a pod's row: what kubectl get pods prints against a cluster.
func podRow(p *v1.Pod, now time.Time) metav1.TableRow {
	total := len(p.Spec.Containers)
	ready := 0
	restarts := 0
	var lastRestart time.Time
	note := func(cs v1.ContainerStatus) {
		restarts += int(cs.RestartCount)
		if t := cs.LastTerminationState.Terminated; t != nil && t.FinishedAt.After(lastRestart) {
			lastRestart = t.FinishedAt.Time
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		note(cs)
		if cs.Ready && cs.State.Running != nil {
			ready++
		}
	}
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			total++
		}
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if !sidecars[cs.Name] {
			continue
		}
		note(cs)
		if cs.Ready && cs.State.Running != nil {
			ready++
		}
	}
	restartCell := fmt.Sprint(restarts)
	if restarts > 0 && !lastRestart.IsZero() {
		restartCell = fmt.Sprintf("%d (%s ago)", restarts, duration.HumanDuration(now.Sub(lastRestart)))
	}
	ip := "<none>"
	if p.Status.PodIP != "" {
		ip = p.Status.PodIP
	}
	gates := "<none>"
	if n := len(p.Spec.ReadinessGates); n > 0 {
		met := 0
		for _, g := range p.Spec.ReadinessGates {
			for _, c := range p.Status.Conditions {
				if c.Type == g.ConditionType && c.Status == v1.ConditionTrue {
					met++
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", met, n)
	}
	status := podStatus(p)
	row := metav1.TableRow{Cells: []any{
		p.Name, fmt.Sprintf("%d/%d", ready, total), status, restartCell, age(p.CreationTimestamp, now),
		ip, orNone(p.Spec.NodeName), orNone(p.Status.NominatedNodeName), gates,
	}}
	if status == "Completed" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		row.Conditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
			Reason: string(p.Status.Phase), Message: "The pod has completed"}}
	}
	return row
}

// podStatus is the STATUS kubectl shows for a pod: the phase, or the most
// telling reason of its containers (an init container's first, shown as
// Init:…), or Terminating.
func podStatus(p *v1.Pod) string {
	reason := string(p.Status.Phase)
	if p.Status.Reason != "" {
		reason = p.Status.Reason
	}
	initializing := false
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	nInit := len(p.Spec.InitContainers)
	for i, cs := range p.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode == 0 {
			continue
		}
		if sidecars[cs.Name] && cs.Started != nil && *cs.Started {
			continue
		}
		switch {
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			switch {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "" && cs.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + cs.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, nInit)
		}
		initializing = true
		break
	}
	if !initializing {
		hasRunning := false
		for i := len(p.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := p.Status.ContainerStatuses[i]
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				reason = cs.State.Waiting.Reason
			case cs.State.Terminated != nil && cs.State.Terminated.Reason != "":
				reason = cs.State.Terminated.Reason
			case cs.State.Terminated != nil && cs.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", cs.State.Terminated.Signal)
			case cs.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", cs.State.Terminated.ExitCode)
			case cs.Ready && cs.State.Running != nil:
				hasRunning = true
			}
		}
		if reason == "Completed" && hasRunning {
			reason = "Running"
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodReady && c.Status != v1.ConditionTrue {
					reason = "NotReady"
				}
			}
		}
	}
	if p.DeletionTimestamp != nil {
		reason = "Terminating"
	}
	return reason
}

// nodeRow is the node's row, as kubectl get nodes prints it.
func nodeRow(n *v1.Node, now time.Time) metav1.TableRow {
	status := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			status = "NotReady"
			if c.Status == v1.ConditionTrue {
				status = "Ready"
			}
		}
	}
	if n.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	var roles []string
	for k := range n.Labels {
		if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
			roles = append(roles, r)
		}
	}
	sort.Strings(roles)
	var internal, external []string
	for _, a := range n.Status.Addresses {
		switch a.Type {
		case v1.NodeInternalIP:
			internal = append(internal, a.Address)
		case v1.NodeExternalIP:
			external = append(external, a.Address)
		}
	}
	info := n.Status.NodeInfo
	return metav1.TableRow{Cells: []any{
		n.Name, status, orNone(strings.Join(roles, ",")), age(n.CreationTimestamp, now), info.KubeletVersion,
		orNone(strings.Join(internal, ",")), orNone(strings.Join(external, ",")),
		orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion),
	}}
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// eventRow is an event's row, as kubectl get events prints it.
func eventRow(e *v1.Event, now time.Time) metav1.TableRow {
	last := e.LastTimestamp
	if last.IsZero() {
		last = metav1.NewTime(e.EventTime.Time)
	}
	first := e.FirstTimestamp
	if first.IsZero() {
		first = last
	}
	obj := strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name
	return metav1.TableRow{Cells: []any{
		age(last, now), e.Type, e.Reason, obj, strings.TrimSpace(e.Message),
		e.InvolvedObject.FieldPath, e.Source.Component, age(first, now), fmt.Sprint(e.Count), e.Name,
	}}
}

// objectMeta is a copy of obj's ObjectMeta.
func objectMeta(obj runtime.Object) metav1.ObjectMeta {
	switch o := obj.(type) {
	case *v1.Pod:
		return *o.ObjectMeta.DeepCopy()
	case *v1.Node:
		return *o.ObjectMeta.DeepCopy()
	case *v1.Event:
		return *o.ObjectMeta.DeepCopy()
	}
	return metav1.ObjectMeta{}
}
