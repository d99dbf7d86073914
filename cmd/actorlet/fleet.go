package main

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/spf13/pflag"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/fleet"
	etcdsource "github.com/actorlet/actorlet/sources/etcd"
)

// defaultClientEndpoints are the etcd endpoints of the client commands
// (apply, delete, get --all-nodes) without --etcd-endpoints: a local etcd
// on its standard client port, as etcdctl's default.
var defaultClientEndpoints = []string{"http://127.0.0.1:2379"}

// etcdTimeout bounds one request of the client commands, and etcd
// client dials (a variable: tests shorten it).
var etcdTimeout = 10 * time.Second

// etcdFlags are the flags that reach a fleet's etcd, shared by run and the
// client commands.
type etcdFlags struct {
	endpoints                 []string
	certFile, keyFile, caFile string
	prefix                    string
}

// addFlags adds the --etcd-* flags; endpoints is --etcd-endpoints'
// default (none for run: etcd is then off).
func (f *etcdFlags) addFlags(fs *pflag.FlagSet, endpoints []string) {
	fs.StringSliceVar(&f.endpoints, "etcd-endpoints", endpoints, "etcd client URLs of the fleet, comma-separated (e.g. http://10.0.0.1:2379,http://10.0.0.2:2379)")
	fs.StringVar(&f.certFile, "etcd-cert-file", "", "PEM client certificate for etcd (with --etcd-key-file)")
	fs.StringVar(&f.keyFile, "etcd-key-file", "", "PEM private key of --etcd-cert-file")
	fs.StringVar(&f.caFile, "etcd-ca-file", "", "PEM CA bundle that signed etcd's server certificates (TLS without a client certificate too)")
	fs.StringVar(&f.prefix, "etcd-prefix", etcdsource.DefaultPrefix, "key prefix of the fleet in etcd")
}

// enabled reports whether etcd endpoints were given.
func (f *etcdFlags) enabled() bool { return len(f.endpoints) > 0 }

// keys returns the key schema under --etcd-prefix.
func (f *etcdFlags) keys() (etcdsource.Keys, error) {
	k, err := etcdsource.NewKeys(f.prefix)
	if err != nil {
		return k, fmt.Errorf("--etcd-prefix: %w", err)
	}
	return k, nil
}

// client returns an etcd client for the flags (it does not wait for a
// connection). log receives the client's own errors.
func (f *etcdFlags) client(log *zap.Logger) (*clientv3.Client, error) {
	if !f.enabled() {
		return nil, fmt.Errorf("--etcd-endpoints: none given")
	}
	for _, e := range f.endpoints {
		if e == "" {
			return nil, fmt.Errorf("--etcd-endpoints %q: an endpoint is empty", f.endpoints)
		}
	}
	cfg := clientv3.Config{
		Endpoints:   f.endpoints,
		DialTimeout: etcdTimeout,
		// Find a dead connection (a host gone without a reset) within
		// 15 s, rather than the OS's TCP timeouts.
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
		// The client logs every retry as a warning; actorlet reports the
		// failures itself (source errors, /healthz).
		Logger: log.WithOptions(zap.IncreaseLevel(zap.ErrorLevel)),
	}
	if (f.certFile == "") != (f.keyFile == "") {
		return nil, fmt.Errorf("--etcd-cert-file %q, --etcd-key-file %q: give both or neither", f.certFile, f.keyFile)
	}
	if f.certFile != "" || f.caFile != "" {
		info := transport.TLSInfo{CertFile: f.certFile, KeyFile: f.keyFile, TrustedCAFile: f.caFile}
		tlsCfg, err := info.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("--etcd-cert-file %q, --etcd-key-file %q, --etcd-ca-file %q: %w", f.certFile, f.keyFile, f.caFile, err)
		}
		cfg.TLS = tlsCfg
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client of %v: %w", f.endpoints, err)
	}
	return c, nil
}

// fleetConn is a client command's connection to a fleet's etcd.
type fleetConn struct {
	c    *clientv3.Client
	keys etcdsource.Keys
}

// openFleet connects a client command to etcd; close it after use.
func openFleet(f *etcdFlags) (*fleetConn, error) {
	keys, err := f.keys()
	if err != nil {
		return nil, err
	}
	c, err := f.client(zap.NewNop())
	if err != nil {
		return nil, err
	}
	return &fleetConn{c: c, keys: keys}, nil
}

func (fc *fleetConn) Close() { _ = fc.c.Close() }

// request returns a context for one etcd request of a client command.
func request(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, etcdTimeout)
}

// etcdError names the endpoints in an error of a client command.
func (f *etcdFlags) etcdError(what string, err error) error {
	return fmt.Errorf("%s (etcd %v): %w", what, f.endpoints, err)
}

// openEtcd opens the etcd client of `run` when --etcd-endpoints is given
// (nil otherwise), with the key schema of --etcd-prefix.
func openEtcd(f runFlags, log *zap.Logger) (*clientv3.Client, etcdsource.Keys, error) {
	keys, err := f.etcd.keys()
	if err != nil || !f.etcd.enabled() {
		return nil, keys, err
	}
	if err := etcdsource.ValidNodeName(f.nodeName); err != nil {
		return nil, keys, fmt.Errorf("--node-name with --etcd-endpoints: %w", err)
	}
	c, err := f.etcd.client(log.Named("etcd"))
	if err != nil {
		return nil, keys, err
	}
	return c, keys, nil
}

// fleetStopTimeout bounds writing the last statuses at exit; revoking the
// heartbeat lease takes at most 0.5 s more, so with the actor tree's 8 s
// the agent still exits within 10 s.
const fleetStopTimeout = time.Second

// startFleet starts writing the node's heartbeat, pod statuses and events
// to etcd (nothing without a client). The returned func stops it (once;
// later calls do nothing), revoking the heartbeat.
func startFleet(f runFlags, log *zap.Logger, ec *clientv3.Client, keys etcdsource.Keys, root *actor.RootContext, node *actor.PID) (func(), error) {
	if ec == nil {
		return func() {}, nil
	}
	p, err := fleet.New(fleet.Options{
		Client: ec, Keys: keys, Node: f.nodeName, LeaseDuration: f.nodeLease, Logger: log.Named("fleet"),
	})
	if err != nil {
		return nil, err
	}
	p.Attach(root, node)
	return func() { p.Stop(fleetStopTimeout) }, nil
}
