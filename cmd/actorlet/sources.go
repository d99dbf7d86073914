package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/sources/dir"
	etcdsource "github.com/actorlet/actorlet/sources/etcd"
	urlsource "github.com/actorlet/actorlet/sources/url"
)

// buildSources makes the sources the flags ask for: at least one of
// --manifests, --manifest-url and --etcd-endpoints (ec, the client opened
// by openEtcd, nil without it).
func buildSources(f runFlags, log *zap.Logger, ec *clientv3.Client, keys etcdsource.Keys) ([]sources.Source, error) {
	var srcs []sources.Source
	if f.manifests != "" {
		abs, err := filepath.Abs(f.manifests)
		if err != nil {
			return nil, fmt.Errorf("--manifests %s: %w", f.manifests, err)
		}
		// A directory that does not exist yet is watched until it appears;
		// a file is a mistake.
		if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
			return nil, fmt.Errorf("--manifests %s: not a directory", abs)
		}
		srcs = append(srcs, dir.New(abs, f.nodeName, dir.WithLogger(log.Named("source")), dir.WithValidation(f.validation()), dir.WithStrictManifests(f.strict)))
	}
	if f.manifestURL != "" {
		opts := []urlsource.Option{urlsource.WithPeriod(f.urlPeriod), urlsource.WithLogger(log.Named("source")), urlsource.WithValidation(f.validation())}
		for _, h := range f.urlHeaders {
			k, v, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("--manifest-url-header %q: want 'Key: Value'", h)
			}
			opts = append(opts, urlsource.WithHeader(strings.TrimSpace(k), strings.TrimSpace(v)))
		}
		s, err := urlsource.New(f.manifestURL, f.nodeName, opts...)
		if err != nil {
			return nil, fmt.Errorf("--manifest-url: %w", err)
		}
		srcs = append(srcs, s)
	}
	if ec != nil {
		s, err := etcdsource.New(ec, keys, f.nodeName, etcdsource.WithLogger(log.Named("source")), etcdsource.WithValidation(f.validation()))
		if err != nil {
			return nil, fmt.Errorf("--etcd-endpoints: %w", err)
		}
		srcs = append(srcs, s)
	}
	if len(srcs) == 0 {
		return nil, fmt.Errorf("no pod source: give --manifests DIR, --manifest-url URL and/or --etcd-endpoints URLS")
	}
	return srcs, nil
}

func sourceNames(srcs []sources.Source) []string {
	out := make([]string, len(srcs))
	for i, s := range srcs {
		out[i] = s.Name()
	}
	return out
}

// validation is what the operator allows in manifests.
func (f runFlags) validation() sources.Validation {
	return sources.Validation{AllowPrivileged: f.allowPriv, AllowHostPath: f.allowHostPath}
}
