package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/actorlet/actorlet/internal/manifest"
	etcdsource "github.com/actorlet/actorlet/sources/etcd"
)

// applyFlags are the flags of `actorlet apply`.
type applyFlags struct {
	etcd          etcdFlags
	file          string
	node          string
	namespace     string
	allowPriv     bool
	allowHostPath bool
}

func newApplyCmd() *cobra.Command {
	f := &applyFlags{}
	cmd := &cobra.Command{
		Use:   "apply -f FILE --node NODE",
		Short: "Give a pod to a node of a fleet (writes it to etcd)",
		Long: `Give a pod to a node of a fleet: the v1.Pod manifest in FILE (YAML or JSON,
"-" for standard input) is validated as the node would, then written as it is to
<prefix>/nodes/<node>/pods/<namespace>/<name> in etcd, where the node's agent
(actorlet run --etcd-endpoints) picks it up. A pod of the same name is replaced.
The namespace is the manifest's metadata.namespace, else --namespace, else
"default".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return applyPod(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "filename", "f", "", "the pod manifest (YAML or JSON); - for standard input")
	fl.StringVar(&f.node, "node", "", "the node that runs the pod")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "namespace when the manifest has none (default \"default\")")
	fl.BoolVar(&f.allowPriv, "allow-privileged", false, "accept privileged containers (the node must run with --allow-privileged too)")
	fl.BoolVar(&f.allowHostPath, "allow-host-path", false, "accept hostPath volumes (the node must run with --allow-host-path too)")
	f.etcd.addFlags(fl, defaultClientEndpoints)
	return cmd
}

// applyPod validates f.file's pod and writes it to its node's key.
// Warnings (ignored fields, a node without heartbeat) go to errOut.
func applyPod(ctx context.Context, stdin io.Reader, out, errOut io.Writer, f *applyFlags) error {
	if f.file == "" {
		return fmt.Errorf("-f/--filename: required (a pod manifest, or - for standard input)")
	}
	if err := etcdsource.ValidNodeName(f.node); err != nil {
		return fmt.Errorf("--node: %w", err)
	}
	path, data, err := readManifest(stdin, f.file)
	if err != nil {
		return err
	}
	pod, err := manifest.Decode(path, data)
	if err != nil {
		return err // names the file
	}
	switch {
	case pod.Namespace == "" && f.namespace != "":
		pod.Namespace = f.namespace
	case pod.Namespace == "":
		pod.Namespace = manifest.DefaultNamespace
	case f.namespace != "" && f.namespace != pod.Namespace:
		return &manifest.FileError{Path: path, Err: fmt.Errorf("metadata.namespace: %q differs from --namespace %q", pod.Namespace, f.namespace)}
	}
	manifest.SetDefaults(pod)
	warnings, err := manifest.ValidateWith(pod, manifest.ValidationOptions{AllowPrivileged: f.allowPriv, AllowHostPath: f.allowHostPath})
	for _, w := range warnings {
		fmt.Fprintf(errOut, "warning: manifest %s: %s\n", path, w)
	}
	if err != nil {
		return &manifest.FileError{Path: path, Err: err}
	}

	fc, err := openFleet(&f.etcd)
	if err != nil {
		return err
	}
	defer fc.Close()
	key := fc.keys.Pod(f.node, pod.Namespace, pod.Name)
	rctx, cancel := request(ctx)
	defer cancel()
	if _, err := fc.c.Put(rctx, key, string(data)); err != nil {
		return f.etcd.etcdError("write "+key, err)
	}
	fmt.Fprintf(out, "pod/%s applied to node %s (%s)\n", pod.Name, f.node, key)
	warnNoHeartbeat(rctx, fc, f.node, errOut)
	return nil
}

// readManifest reads file, or standard input for "-", at most 1.5 MiB
// (etcd's default request limit). It returns the path to name it by.
func readManifest(stdin io.Reader, file string) (string, []byte, error) {
	const limit = 3 << 19 // 1.5 MiB
	path := file
	var r io.Reader = stdin
	if file == "-" {
		path = "<stdin>"
	} else {
		fh, err := os.Open(file)
		if err != nil {
			return "", nil, fmt.Errorf("manifest %s: %w", file, err)
		}
		defer fh.Close()
		r = fh
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return "", nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if len(data) > limit {
		return "", nil, fmt.Errorf("manifest %s: over %d bytes, etcd's default request limit", path, limit)
	}
	return path, data, nil
}

// warnNoHeartbeat tells errOut when node has no heartbeat (no agent runs
// it now). A failure to check is not an error: the write succeeded.
func warnNoHeartbeat(ctx context.Context, fc *fleetConn, node string, errOut io.Writer) {
	resp, err := fc.c.Get(ctx, fc.keys.Heartbeat(node), clientv3.WithCountOnly())
	if err == nil && resp.Count == 0 {
		fmt.Fprintf(errOut, "warning: node %s has no heartbeat (%s): no agent runs it now; its pods start when one does\n",
			node, fc.keys.Heartbeat(node))
	}
}
