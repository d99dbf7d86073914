package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/actorlet/actorlet/internal/apiclient"
)

// cliNow is the clock behind the ages and times that get and describe
// print; tests fix it. Times print in its location.
var cliNow = time.Now

// defaultNamespace is the namespace of get, describe and logs without -n,
// as kubectl's.
const defaultNamespace = "default"

// getPodsFlags are the flags of `actorlet get pods`.
type getPodsFlags struct {
	namespace     string
	allNamespaces bool
	output        string

	// From a fleet's etcd rather than an agent's API (see fleet_get.go).
	allNodes     bool
	node         string
	namespaceSet bool // -n given: filter the fleet's pods by it
	etcd         etcdFlags
}

// newGetCmd returns `actorlet get`, whose one resource is pods.
func newGetCmd() *cobra.Command {
	conn := &apiclient.Flags{}
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Display resources of a running agent",
		Args:  cobra.NoArgs,
	}
	conn.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(newGetPodsCmd(conn))
	return cmd
}

func newGetPodsCmd(conn *apiclient.Flags) *cobra.Command {
	f := &getPodsFlags{}
	cmd := &cobra.Command{
		Use:     "pods [NAME...]",
		Aliases: []string{"pod", "po"},
		Short:   "List the agent's pods as kubectl prints them",
		Long: `List the pods of a running agent, read from its API (--server), as
kubectl prints them: NAME READY STATUS RESTARTS AGE; -o wide adds IP and NODE,
-o json and -o yaml print the PodList (or the one pod asked for by name).

With --all-nodes (or --node NODE) it reads a fleet's etcd instead
(--etcd-endpoints): per node its heartbeat (time since the node renewed its
lease; "stale" once the lease expired, and its statuses are then marked stale),
per pod its status as the node last wrote it. Every namespace unless -n is given.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.allNodes || f.node != "" {
				if f.allNodes && f.node != "" {
					return fmt.Errorf("--all-nodes and --node %s: give one", f.node)
				}
				f.namespaceSet = cmd.Flags().Changed("namespace")
				return getFleetPods(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f, args)
			}
			c, err := conn.Client()
			if err != nil {
				return err
			}
			return getPods(cmd.Context(), c, cmd.OutOrStdout(), cmd.ErrOrStderr(), f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.namespace, "namespace", "n", defaultNamespace, "namespace of the pods")
	fl.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "list the pods of every namespace")
	fl.StringVarP(&f.output, "output", "o", "", "output format: wide, json or yaml (default: the table)")
	fl.BoolVar(&f.allNodes, "all-nodes", false, "list the pods of every node of a fleet, from etcd (see --etcd-endpoints)")
	fl.StringVar(&f.node, "node", "", "list the pods of this node of a fleet, from etcd")
	f.etcd.addFlags(fl, defaultClientEndpoints)
	return cmd
}

// getPods lists the pods named (all when none) in f's namespace(s) on out;
// "No resources found" goes to errOut as kubectl's.
func getPods(ctx context.Context, c *apiclient.Client, out, errOut io.Writer, f *getPodsFlags, names []string) error {
	switch f.output {
	case "", "wide", "json", "yaml":
	default:
		return fmt.Errorf("--output %q: want wide, json or yaml", f.output)
	}
	list, err := c.Pods(ctx)
	if err != nil {
		return err
	}
	var pods []v1.Pod
	for _, p := range list.Items {
		if f.allNamespaces || p.Namespace == f.namespace {
			pods = append(pods, p)
		}
	}
	var missing []string
	if len(names) > 0 {
		pods, missing = selectPods(pods, names)
	}
	if err := printPodsAs(out, errOut, f, pods, len(names) == 1 && len(pods) == 1); err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("pods %s not found in namespace %q", quoteAll(missing), f.namespace)
	}
	return nil
}

// selectPods keeps the pods named, in the order named, and returns the
// names it did not find.
func selectPods(pods []v1.Pod, names []string) (found []v1.Pod, missing []string) {
	for _, n := range names {
		ok := false
		for _, p := range pods {
			if p.Name == n {
				found, ok = append(found, p), true
			}
		}
		if !ok {
			missing = append(missing, n)
		}
	}
	return found, missing
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// printPodsAs prints pods in f.output's format; single prints the one pod
// as an object rather than a list in json and yaml.
func printPodsAs(out, errOut io.Writer, f *getPodsFlags, pods []v1.Pod, single bool) error {
	switch f.output {
	case "json", "yaml":
		var obj any
		if single {
			p := pods[0]
			p.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
			obj = &p
		} else {
			if pods == nil {
				pods = []v1.Pod{}
			}
			obj = &v1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: pods}
		}
		return printObject(out, f.output, obj)
	}
	if len(pods) == 0 {
		if f.allNamespaces {
			_, err := fmt.Fprintln(errOut, "No resources found")
			return err
		}
		_, err := fmt.Fprintf(errOut, "No resources found in %s namespace.\n", f.namespace)
		return err
	}
	return printPodTable(out, pods, f.output == "wide", f.allNamespaces, cliNow())
}

// printObject prints obj as indented JSON (as kubectl: four spaces) or YAML.
func printObject(out io.Writer, format string, obj any) error {
	data, err := json.MarshalIndent(obj, "", "    ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
	} else {
		data = append(data, '\n')
	}
	_, err = out.Write(data)
	return err
}

// newTable returns a tabwriter laid out as kubectl's tables: columns three
// spaces apart.
func newTable(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)
}

// printPodTable prints kubectl's pod table: [NAMESPACE] NAME READY STATUS
// RESTARTS AGE [IP NODE].
func printPodTable(out io.Writer, pods []v1.Pod, wide, withNamespace bool, now time.Time) error {
	tw := newTable(out)
	var header []string
	if withNamespace {
		header = append(header, "NAMESPACE")
	}
	header = append(header, "NAME", "READY", "STATUS", "RESTARTS", "AGE")
	if wide {
		header = append(header, "IP", "NODE")
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for i := range pods {
		p := &pods[i]
		s := summarizePod(p)
		var row []string
		if withNamespace {
			row = append(row, p.Namespace)
		}
		row = append(row, p.Name, fmt.Sprintf("%d/%d", s.ready, s.total), s.status, s.restartsColumn(now), podAge(p, now))
		if wide {
			row = append(row, orNone(p.Status.PodIP), orNone(p.Spec.NodeName))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// podAge is the pod's age for the AGE column: since status.startTime, else
// metadata.creationTimestamp.
func podAge(p *v1.Pod, now time.Time) string {
	if p.Status.StartTime != nil && !p.Status.StartTime.IsZero() {
		return age(p.Status.StartTime.Time, now)
	}
	return age(p.CreationTimestamp.Time, now)
}

// age prints now-t as kubectl does (45s, 5m30s, 3h, 2d …), "<unknown>" for
// a zero t.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// podSummary is what kubectl's pod table shows of a pod's status.
type podSummary struct {
	status       string
	ready, total int
	restarts     int
	lastRestart  time.Time // latest lastState.terminated.finishedAt
}

// restartsColumn is RESTARTS: the count, with the age of the last restart
// when known ("5 (45s ago)").
func (s podSummary) restartsColumn(now time.Time) string {
	if s.restarts == 0 || s.lastRestart.IsZero() {
		return strconv.Itoa(s.restarts)
	}
	return fmt.Sprintf("%d (%s ago)", s.restarts, age(s.lastRestart, now))
}

// summarizePod computes STATUS, READY and RESTARTS by kubectl's rules: the
// phase (or status.reason); an unfinished init container shows as
// Init:<reason> or Init:<done>/<total>; otherwise a container that is
// waiting (CrashLoopBackOff, ContainerCreating …) or terminated (Completed,
// Error, OOMKilled, or ExitCode:<n> / Signal:<n>) overrides it, the first
// container in the spec winning; Completed turns back to Running while a
// container still runs and the pod is Ready (NotReady when not); and a pod
// being deleted is Terminating.
func summarizePod(p *v1.Pod) podSummary {
	s := podSummary{status: string(p.Status.Phase), total: len(p.Spec.Containers)}
	if p.Status.Reason != "" {
		s.status = p.Status.Reason
	}
	noteRestarts := func(cs *v1.ContainerStatus) {
		s.restarts += int(cs.RestartCount)
		if t := cs.LastTerminationState.Terminated; t != nil && t.FinishedAt.After(s.lastRestart) {
			s.lastRestart = t.FinishedAt.Time
		}
	}

	initializing := false
	for i := range p.Status.InitContainerStatuses {
		cs := &p.Status.InitContainerStatuses[i]
		noteRestarts(cs)
		if reason, busy := initContainerReason(cs, i, len(p.Spec.InitContainers)); busy {
			s.status, initializing = reason, true
			break
		}
	}
	if initializing && !podConditionTrue(p, v1.PodInitialized) {
		return s.terminating(p)
	}

	// Init restarts are not shown once the pod is initialized.
	s.restarts, s.lastRestart = 0, time.Time{}
	running := false
	// Backwards, so the first container in the spec has the last word.
	for i := len(p.Status.ContainerStatuses) - 1; i >= 0; i-- {
		cs := &p.Status.ContainerStatuses[i]
		noteRestarts(cs)
		switch st := cs.State; {
		case st.Waiting != nil && st.Waiting.Reason != "":
			s.status = st.Waiting.Reason
		case st.Terminated != nil && st.Terminated.Reason != "":
			s.status = st.Terminated.Reason
		case st.Terminated != nil && st.Terminated.Signal != 0:
			s.status = fmt.Sprintf("Signal:%d", st.Terminated.Signal)
		case st.Terminated != nil:
			s.status = fmt.Sprintf("ExitCode:%d", st.Terminated.ExitCode)
		case cs.Ready && st.Running != nil:
			running = true
			s.ready++
		}
	}
	if s.status == "Completed" && running {
		if podConditionTrue(p, v1.PodReady) {
			s.status = string(v1.PodRunning)
		} else {
			s.status = "NotReady"
		}
	}
	return s.terminating(p)
}

// terminating applies the deletion rule: a pod being deleted that has not
// finished is Terminating.
func (s podSummary) terminating(p *v1.Pod) podSummary {
	if p.DeletionTimestamp != nil && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
		s.status = "Terminating"
	}
	return s
}

// initContainerReason says what an init container shows while the pod
// initializes; busy is false for one that finished successfully.
func initContainerReason(cs *v1.ContainerStatus, i, total int) (reason string, busy bool) {
	st := cs.State
	switch {
	case st.Terminated != nil && st.Terminated.ExitCode == 0:
		return "", false
	case st.Terminated != nil && st.Terminated.Reason != "":
		return "Init:" + st.Terminated.Reason, true
	case st.Terminated != nil && st.Terminated.Signal != 0:
		return fmt.Sprintf("Init:Signal:%d", st.Terminated.Signal), true
	case st.Terminated != nil:
		return fmt.Sprintf("Init:ExitCode:%d", st.Terminated.ExitCode), true
	case st.Waiting != nil && st.Waiting.Reason != "" && st.Waiting.Reason != "PodInitializing":
		return "Init:" + st.Waiting.Reason, true
	default:
		return fmt.Sprintf("Init:%d/%d", i, total), true
	}
}

// podConditionTrue reports whether the pod's condition t is True.
func podConditionTrue(p *v1.Pod, t v1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
