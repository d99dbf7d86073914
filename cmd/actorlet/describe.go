package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/internal/apiclient"
)

// newDescribeCmd returns `actorlet describe`, whose one resource is pod.
func newDescribeCmd() *cobra.Command {
	conn := &apiclient.Flags{}
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show details of a resource of a running agent",
		Args:  cobra.NoArgs,
	}
	conn.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(newDescribePodCmd(conn))
	return cmd
}

func newDescribePodCmd(conn *apiclient.Flags) *cobra.Command {
	namespace := defaultNamespace
	cmd := &cobra.Command{
		Use:     "pod NAME",
		Aliases: []string{"pods", "po"},
		Short:   "Show a pod as kubectl describe does: containers, conditions and events",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.Client()
			if err != nil {
				return err
			}
			return describePodCmd(cmd.Context(), c, cmd.OutOrStdout(), namespace, args[0])
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", defaultNamespace, "namespace of the pod")
	return cmd
}

// describePodCmd fetches the pod and its events and prints them.
func describePodCmd(ctx context.Context, c *apiclient.Client, out io.Writer, namespace, name string) error {
	pod, err := c.Pod(ctx, namespace, name)
	if err != nil {
		return err
	}
	events, err := c.Events(ctx)
	if err != nil {
		return err
	}
	return describePod(out, pod, podEvents(pod, events.Items), cliNow())
}

// podEvents keeps the events about pod (by namespace and name, and UID
// when both sides know it), oldest first by last occurrence.
func podEvents(pod *v1.Pod, events []v1.Event) []v1.Event {
	var out []v1.Event
	for _, e := range events {
		ref := e.InvolvedObject
		if ref.Kind != "" && ref.Kind != "Pod" {
			continue
		}
		if ref.Namespace != pod.Namespace || ref.Name != pod.Name {
			continue
		}
		if ref.UID != "" && pod.UID != "" && ref.UID != pod.UID {
			continue
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return eventLast(out[i]).Before(eventLast(out[j])) })
	return out
}

// eventLast is when an event last happened.
func eventLast(e v1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	if !e.FirstTimestamp.IsZero() {
		return e.FirstTimestamp.Time
	}
	return e.EventTime.Time
}

// describer writes kubectl describe's layout: "Label:\tvalue" lines indented
// two spaces per level, aligned by one tabwriter (alignment restarts after
// every line without a tab, such as a section title).
type describer struct {
	tw  *tabwriter.Writer
	loc *time.Location
}

func (d *describer) line(level int, format string, args ...any) {
	fmt.Fprintf(d.tw, strings.Repeat("  ", level)+format+"\n", args...)
}

// field writes "Label:\tvalue", with <none> for an empty value.
func (d *describer) field(level int, label, value string) {
	d.line(level, "%s:\t%s", label, orNone(value))
}

// time formats t as kubectl describe does (RFC 1123 with a numeric zone).
func (d *describer) time(t time.Time) string {
	return t.In(d.loc).Format(time.RFC1123Z)
}

// describePod prints pod and its events (already filtered) as kubectl
// describe pod does, ages measured at now and times in now's location.
func describePod(out io.Writer, pod *v1.Pod, events []v1.Event, now time.Time) error {
	d := &describer{tw: tabwriter.NewWriter(out, 0, 8, 2, ' ', 0), loc: now.Location()}
	d.field(0, "Name", pod.Name)
	d.field(0, "Namespace", pod.Namespace)
	node := pod.Spec.NodeName
	if node != "" && pod.Status.HostIP != "" {
		node += "/" + pod.Status.HostIP
	}
	d.field(0, "Node", node)
	if st := pod.Status.StartTime; st != nil && !st.IsZero() {
		d.field(0, "Start Time", d.time(st.Time))
	}
	d.field(0, "Labels", joinMap(pod.Labels, "="))
	d.field(0, "Annotations", joinMap(pod.Annotations, ": "))
	status := string(pod.Status.Phase)
	if pod.DeletionTimestamp != nil {
		status = "Terminating (lasts " + age(pod.DeletionTimestamp.Time, now) + ")"
	}
	d.field(0, "Status", status)
	if pod.Status.Reason != "" {
		d.field(0, "Reason", pod.Status.Reason)
	}
	if pod.Status.Message != "" {
		d.field(0, "Message", pod.Status.Message)
	}
	d.field(0, "IP", pod.Status.PodIP)
	ips := pod.Status.PodIPs
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = []v1.PodIP{{IP: pod.Status.PodIP}}
	}
	if len(ips) > 0 {
		d.line(0, "IPs:")
		for _, ip := range ips {
			d.field(1, "IP", ip.IP)
		}
	} else {
		d.field(0, "IPs", "")
	}
	if len(pod.Spec.InitContainers) > 0 {
		d.line(0, "Init Containers:")
		d.containers(pod.Spec.InitContainers, pod.Status.InitContainerStatuses)
	}
	d.line(0, "Containers:")
	d.containers(pod.Spec.Containers, pod.Status.ContainerStatuses)
	d.conditions(pod.Status.Conditions)
	if pod.Status.QOSClass != "" {
		d.field(0, "QoS Class", string(pod.Status.QOSClass))
	}
	d.events(events, now)
	return d.tw.Flush()
}

// containers describes each container of the spec with its status.
func (d *describer) containers(specs []v1.Container, statuses []v1.ContainerStatus) {
	byName := make(map[string]*v1.ContainerStatus, len(statuses))
	for i := range statuses {
		byName[statuses[i].Name] = &statuses[i]
	}
	for _, c := range specs {
		d.line(1, "%s:", c.Name)
		cs, known := byName[c.Name]
		if known {
			d.field(2, "Container ID", cs.ContainerID)
		}
		d.field(2, "Image", c.Image)
		if known {
			d.field(2, "Image ID", cs.ImageID)
		}
		d.ports(c.Ports)
		if len(c.Command) > 0 {
			d.line(2, "Command:")
			for _, s := range c.Command {
				d.line(3, "%s", s)
			}
		}
		if len(c.Args) > 0 {
			d.line(2, "Args:")
			for _, s := range c.Args {
				d.line(3, "%s", s)
			}
		}
		if !known {
			d.field(2, "State", "Waiting")
			d.field(2, "Ready", "False")
			d.field(2, "Restart Count", "0")
			continue
		}
		d.state("State", cs.State)
		if cs.LastTerminationState != (v1.ContainerState{}) {
			d.state("Last State", cs.LastTerminationState)
		}
		d.field(2, "Ready", boolWord(cs.Ready))
		d.field(2, "Restart Count", fmt.Sprint(cs.RestartCount))
	}
}

// ports writes the Port and Host Port lines.
func (d *describer) ports(ports []v1.ContainerPort) {
	if len(ports) == 0 {
		return
	}
	var cps, hps []string
	for _, p := range ports {
		proto := p.Protocol
		if proto == "" {
			proto = v1.ProtocolTCP
		}
		cps = append(cps, fmt.Sprintf("%d/%s", p.ContainerPort, proto))
		hps = append(hps, fmt.Sprintf("%d/%s", p.HostPort, proto))
	}
	label := "Port"
	if len(ports) > 1 {
		label = "Ports"
	}
	d.field(2, label, strings.Join(cps, ", "))
	d.field(2, "Host "+label, strings.Join(hps, ", "))
}

// state writes a container state: its word, then reason, exit code and
// times one level deeper.
func (d *describer) state(label string, st v1.ContainerState) {
	switch {
	case st.Running != nil:
		d.field(2, label, "Running")
		d.field(3, "Started", d.time(st.Running.StartedAt.Time))
	case st.Waiting != nil:
		d.field(2, label, "Waiting")
		if st.Waiting.Reason != "" {
			d.field(3, "Reason", st.Waiting.Reason)
		}
		if st.Waiting.Message != "" {
			d.field(3, "Message", st.Waiting.Message)
		}
	case st.Terminated != nil:
		t := st.Terminated
		d.field(2, label, "Terminated")
		if t.Reason != "" {
			d.field(3, "Reason", t.Reason)
		}
		if t.Message != "" {
			d.field(3, "Message", t.Message)
		}
		d.field(3, "Exit Code", fmt.Sprint(t.ExitCode))
		if t.Signal != 0 {
			d.field(3, "Signal", fmt.Sprint(t.Signal))
		}
		d.field(3, "Started", d.time(t.StartedAt.Time))
		d.field(3, "Finished", d.time(t.FinishedAt.Time))
	default:
		d.field(2, label, "Waiting")
	}
}

// conditions writes the Conditions table.
func (d *describer) conditions(conds []v1.PodCondition) {
	if len(conds) == 0 {
		return
	}
	d.line(0, "Conditions:")
	d.line(1, "Type\tStatus")
	for _, c := range conds {
		d.line(1, "%s\t%s", c.Type, c.Status)
	}
}

// events writes the Events table, or "Events: <none>".
func (d *describer) events(events []v1.Event, now time.Time) {
	if len(events) == 0 {
		d.field(0, "Events", "")
		return
	}
	d.line(0, "Events:")
	d.line(1, "Type\tReason\tAge\tFrom\tMessage")
	d.line(1, "----\t------\t----\t----\t-------")
	for _, e := range events {
		from := e.Source.Component
		if e.Source.Host != "" {
			from += ", " + e.Source.Host
		}
		d.line(1, "%s\t%s\t%s\t%s\t%s", e.Type, e.Reason, eventAge(e, now), from, strings.TrimSpace(e.Message))
	}
}

// eventAge is kubectl's AGE of an event: "3m", or "10s (x5 over 3m)" for one
// seen several times.
func eventAge(e v1.Event, now time.Time) string {
	first := e.FirstTimestamp.Time
	if first.IsZero() {
		first = e.EventTime.Time
	}
	if e.Count > 1 {
		return fmt.Sprintf("%s (x%d over %s)", age(eventLast(e), now), e.Count, age(first, now))
	}
	return age(first, now)
}

func boolWord(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// joinMap prints a map sorted by key, one "key<sep>value" per line; the
// lines after the first start with a tab, so the tabwriter aligns them under
// the first, as kubectl describe prints labels.
func joinMap(m map[string]string, sep string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + sep + m[k]
	}
	return strings.Join(parts, "\n\t")
}
