package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	etcdsource "github.com/actorlet/actorlet/sources/etcd"
)

// deleteFlags are the flags of `actorlet delete pod`.
type deleteFlags struct {
	etcd      etcdFlags
	node      string
	namespace string
}

// newDeleteCmd returns `actorlet delete`, whose one resource is pods.
func newDeleteCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Take resources away from a node of a fleet (in etcd)",
		Args:  cobra.NoArgs,
	}
	f := &deleteFlags{}
	pods := &cobra.Command{
		Use:     "pod NAME... --node NODE",
		Aliases: []string{"pods", "po"},
		Short:   "Take pods away from a node of a fleet",
		Long: `Delete the pods' keys <prefix>/nodes/<node>/pods/<namespace>/<name> in etcd:
the node's agent stops and removes the pods (each within its grace period), then
deletes their status keys. It fails, naming them, for pods the node does not have.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deletePods(cmd.Context(), cmd.OutOrStdout(), f, args)
		},
	}
	fl := pods.Flags()
	fl.StringVar(&f.node, "node", "", "the node that runs the pods")
	fl.StringVarP(&f.namespace, "namespace", "n", defaultNamespace, "namespace of the pods")
	f.etcd.addFlags(fl, defaultClientEndpoints)
	cmd.AddCommand(pods)
	return cmd
}

// deletePods deletes the keys of names on f.node.
func deletePods(ctx context.Context, out io.Writer, f *deleteFlags, names []string) error {
	if err := etcdsource.ValidNodeName(f.node); err != nil {
		return fmt.Errorf("--node: %w", err)
	}
	fc, err := openFleet(&f.etcd)
	if err != nil {
		return err
	}
	defer fc.Close()
	var missing []string
	for _, name := range names {
		key := fc.keys.Pod(f.node, f.namespace, name)
		rctx, cancel := request(ctx)
		resp, err := fc.c.Delete(rctx, key)
		cancel()
		if err != nil {
			return f.etcd.etcdError("delete "+key, err)
		}
		if resp.Deleted == 0 {
			missing = append(missing, name)
			continue
		}
		fmt.Fprintf(out, "pod/%s deleted from node %s (%s)\n", name, f.node, key)
	}
	if len(missing) > 0 {
		return fmt.Errorf("pods %s not found on node %s in namespace %q (no key under %s)",
			quoteAll(missing), f.node, f.namespace, fc.keys.Pods(f.node)+f.namespace+"/")
	}
	return nil
}
