package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/actorlet/actorlet/internal/apiclient"
)

// logsFlags are the flags of `actorlet logs`.
type logsFlags struct {
	conn       apiclient.Flags
	container  string
	namespace  string
	follow     bool
	previous   bool
	tail       int64
	timestamps bool
	since      time.Duration
}

// newLogsCmd returns `actorlet logs POD`.
func newLogsCmd() *cobra.Command {
	f := &logsFlags{}
	cmd := &cobra.Command{
		Use:   "logs POD",
		Short: "Print a container's log from a running agent",
		Long: `Print the log (stdout and stderr) of a container of a pod that a running
agent manages, read from its API (--server). -c may be left out when the pod
has one container. With -f the log is followed until Ctrl-C.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c, err := f.conn.Client()
			if err != nil {
				return err
			}
			return runLogs(ctx, c, cmd.OutOrStdout(), f, args[0])
		},
	}
	f.conn.AddFlags(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVarP(&f.container, "container", "c", "", "container name (default: the pod's only container)")
	fl.StringVarP(&f.namespace, "namespace", "n", defaultNamespace, "namespace of the pod")
	fl.BoolVarP(&f.follow, "follow", "f", false, "keep printing new lines until Ctrl-C")
	fl.BoolVarP(&f.previous, "previous", "p", false, "print the log of the container's previous instance")
	fl.Int64Var(&f.tail, "tail", -1, "print only the last N lines (-1: all)")
	fl.BoolVar(&f.timestamps, "timestamps", false, "prefix every line with its RFC 3339 time")
	fl.DurationVar(&f.since, "since", 0, "print only lines newer than this duration, e.g. 5s, 2m, 3h (0: all)")
	return cmd
}

// runLogs copies the chosen container's log to out until its end or, when
// following, until ctx ends.
func runLogs(ctx context.Context, c *apiclient.Client, out io.Writer, f *logsFlags, pod string) error {
	if f.tail < -1 {
		return fmt.Errorf("--tail %d: want -1 (all) or a number of lines ≥ 0", f.tail)
	}
	if f.since < 0 {
		return fmt.Errorf("--since %v: want a positive duration", f.since)
	}
	container := f.container
	if container == "" {
		var err error
		if container, err = onlyContainer(ctx, c, f.namespace, pod); err != nil {
			return err
		}
	}
	p := apiclient.LogParams{Follow: f.follow, Previous: f.previous, Timestamps: f.timestamps, Since: f.since}
	if f.tail >= 0 {
		p.TailLines = &f.tail
	}
	rc, err := c.Logs(ctx, f.namespace, pod, container, p)
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(out, rc); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading the log: %w", err)
	}
	return nil
}

// onlyContainer returns the name of the pod's one container, or an error
// naming the choices, as kubectl's.
func onlyContainer(ctx context.Context, c *apiclient.Client, namespace, name string) (string, error) {
	pod, err := c.Pod(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	if len(pod.Spec.Containers) == 1 {
		return pod.Spec.Containers[0].Name, nil
	}
	names := func(cs []string) string { return "[" + strings.Join(cs, " ") + "]" }
	var apps, inits []string
	for _, ct := range pod.Spec.Containers {
		apps = append(apps, ct.Name)
	}
	for _, ct := range pod.Spec.InitContainers {
		inits = append(inits, ct.Name)
	}
	msg := fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", name, names(apps))
	if len(inits) > 0 {
		msg += " or one of the init containers: " + names(inits)
	}
	return "", errors.New(msg)
}
