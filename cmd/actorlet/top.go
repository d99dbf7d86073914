package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/internal/apiclient"
	"github.com/actorlet/actorlet/internal/stats"
)

// newTopCmd returns `actorlet top pods|node`: resource use from the agent's
// /stats/summary, in kubectl top's columns.
func newTopCmd() *cobra.Command {
	conn := &apiclient.Flags{}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Display the CPU and memory use of a running agent's pods or node",
		Args:  cobra.NoArgs,
	}
	conn.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(newTopPodsCmd(conn), newTopNodeCmd(conn))
	return cmd
}

type topPodsFlags struct {
	namespace     string
	allNamespaces bool
	containers    bool
	sortBy        string
	noHeaders     bool
}

func newTopPodsCmd(conn *apiclient.Flags) *cobra.Command {
	f := &topPodsFlags{}
	cmd := &cobra.Command{
		Use:     "pods [NAME]",
		Aliases: []string{"pod", "po"},
		Short:   "CPU (millicores) and memory (working set, MiB) of each pod, as kubectl top pod",
		Long: `Print each pod's CPU use (the sum of its containers' usageNanoCores, in
millicores) and memory (the sum of its containers' working sets, in MiB), read
from the agent's /stats/summary, as kubectl top pod prints them. A pod none of
whose containers has a CPU rate yet (started less than a second ago) is left
out, as metrics-server leaves it out.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.sortBy != "" && f.sortBy != "cpu" && f.sortBy != "memory" {
				return fmt.Errorf("--sort-by %q: want cpu or memory", f.sortBy)
			}
			c, err := conn.Client()
			if err != nil {
				return err
			}
			s, err := c.Summary(cmd.Context())
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return printTopPods(cmd.OutOrStdout(), cmd.ErrOrStderr(), s, f, name)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.namespace, "namespace", "n", defaultNamespace, "namespace of the pods")
	fl.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "the pods of every namespace")
	fl.BoolVar(&f.containers, "containers", false, "one line per container")
	fl.StringVar(&f.sortBy, "sort-by", "", "cpu or memory: the largest first")
	fl.BoolVar(&f.noHeaders, "no-headers", false, "print no header line")
	return cmd
}

func newTopNodeCmd(conn *apiclient.Flags) *cobra.Command {
	var noHeaders bool
	cmd := &cobra.Command{
		Use:     "node",
		Aliases: []string{"nodes", "no"},
		Short:   "CPU and memory of the node, as kubectl top node",
		Long: `Print the node's CPU use (millicores, and percent of its CPUs) and memory
(working set in MiB, and percent of its memory), from the agent's
/stats/summary and /spec, as kubectl top node prints them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.Client()
			if err != nil {
				return err
			}
			s, err := c.Summary(cmd.Context())
			if err != nil {
				return err
			}
			m, err := c.Machine(cmd.Context())
			if err != nil {
				return err
			}
			return printTopNode(cmd.OutOrStdout(), s.Node, m, noHeaders)
		},
	}
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "print no header line")
	return cmd
}

// topRow is one line of top pods: a pod, or a container with --containers.
type topRow struct {
	namespace, pod, container string
	milliCPU                  int64
	memBytes                  uint64
}

// milli is nanocores as millicores, rounded up as a Quantity's MilliValue.
func milli(nanoCores uint64) int64 { return int64((nanoCores + 999_999) / 1_000_000) }

// mebi is bytes in whole MiB, rounded down as kubectl top prints them.
func mebi(b uint64) uint64 { return b >> 20 }

// topRows picks the rows of f's pods (of name when given) that have a CPU rate.
func topRows(s *statsapi.Summary, f *topPodsFlags, name string) []topRow {
	var rows []topRow
	for _, p := range s.Pods {
		if (!f.allNamespaces && p.PodRef.Namespace != f.namespace) || (name != "" && p.PodRef.Name != name) {
			continue
		}
		pod := topRow{namespace: p.PodRef.Namespace, pod: p.PodRef.Name}
		var ctrs []topRow
		var nano uint64
		measured := false
		for _, c := range p.Containers {
			if c.CPU == nil || c.CPU.UsageNanoCores == nil || c.Memory == nil || c.Memory.WorkingSetBytes == nil {
				continue
			}
			measured = true
			nano += *c.CPU.UsageNanoCores
			pod.memBytes += *c.Memory.WorkingSetBytes
			ctrs = append(ctrs, topRow{namespace: pod.namespace, pod: pod.pod, container: c.Name,
				milliCPU: milli(*c.CPU.UsageNanoCores), memBytes: *c.Memory.WorkingSetBytes})
		}
		if !measured {
			continue
		}
		pod.milliCPU = milli(nano)
		if f.containers {
			rows = append(rows, ctrs...)
		} else {
			rows = append(rows, pod)
		}
	}
	switch f.sortBy {
	case "cpu":
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].milliCPU > rows[j].milliCPU })
	case "memory":
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].memBytes > rows[j].memBytes })
	}
	return rows
}

// printTopPods prints kubectl top pod's table; nothing to print is said on
// errOut as kubectl says it, or is an error for a pod asked for by name.
func printTopPods(out, errOut io.Writer, s *statsapi.Summary, f *topPodsFlags, name string) error {
	rows := topRows(s, f, name)
	if len(rows) == 0 {
		if name != "" {
			return fmt.Errorf("metrics not available yet for pod %s/%s", f.namespace, name)
		}
		if f.allNamespaces {
			fmt.Fprintln(errOut, "No resources found")
		} else {
			fmt.Fprintf(errOut, "No resources found in %s namespace.\n", f.namespace)
		}
		return nil
	}
	tw := newTable(out)
	if !f.noHeaders {
		if f.allNamespaces {
			fmt.Fprint(tw, "NAMESPACE\t")
		}
		if f.containers {
			fmt.Fprint(tw, "POD\t")
		}
		fmt.Fprintln(tw, "NAME\tCPU(cores)\tMEMORY(bytes)\t")
	}
	for _, r := range rows {
		if f.allNamespaces {
			fmt.Fprintf(tw, "%s\t", r.namespace)
		}
		if f.containers {
			fmt.Fprintf(tw, "%s\t%s\t", r.pod, r.container)
		} else {
			fmt.Fprintf(tw, "%s\t", r.pod)
		}
		fmt.Fprintf(tw, "%dm\t%dMi\t\n", r.milliCPU, mebi(r.memBytes))
	}
	return tw.Flush()
}

// printTopNode prints kubectl top node's table; percentages are of the
// machine's CPUs and memory (the node's allocatable: actorlet reserves
// none), truncated as kubectl's.
func printTopNode(out io.Writer, n statsapi.NodeStats, m stats.MachineInfo, noHeaders bool) error {
	if n.CPU == nil || n.CPU.UsageNanoCores == nil || n.Memory == nil || n.Memory.WorkingSetBytes == nil {
		return fmt.Errorf("metrics not available yet for node %s", n.NodeName)
	}
	cpu, mem := milli(*n.CPU.UsageNanoCores), *n.Memory.WorkingSetBytes
	cpuPct, memPct := "<unknown>", "<unknown>"
	if m.NumCores > 0 {
		cpuPct = fmt.Sprintf("%d%%", int64(float64(cpu)/float64(m.NumCores*1000)*100))
	}
	if m.MemoryCapacity > 0 {
		memPct = fmt.Sprintf("%d%%", int64(float64(mem)/float64(m.MemoryCapacity)*100))
	}
	tw := newTable(out)
	if !noHeaders {
		fmt.Fprintln(tw, "NAME\tCPU(cores)\tCPU(%)\tMEMORY(bytes)\tMEMORY(%)\t")
	}
	fmt.Fprintf(tw, "%s\t%dm\t%s\t%dMi\t%s\t\n", n.NodeName, cpu, cpuPct, mebi(mem), memPct)
	return tw.Flush()
}
