// Command actorlet is a node agent: it keeps the containers on one machine
// matching a set of desired pods (static-pod manifests), as the kubelet's
// pod-lifecycle core, built as a tree of supervised actors.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/actorlet/actorlet/internal/version"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "actorlet:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "actorlet",
		Short:         "actorlet keeps this machine's containers matching its desired pods",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCmd(), newGetCmd(), newDescribeCmd(), newLogsCmd(), newApplyCmd(), newDeleteCmd(), newTopCmd(), &cobra.Command{
		Use:   "version",
		Short: "Print actorlet's version",
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "actorlet", version.Version)
		},
	})
	return root
}
