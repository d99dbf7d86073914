package apiclient

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// Flags are the command-line flags that say how to reach an agent, shared by
// the CLI's commands that read its API.
type Flags struct {
	// Server is the agent's API URL; default DefaultServer.
	Server string
	// TokenFile names a file holding the bearer token; empty: no token.
	TokenFile string
	// InsecureSkipTLSVerify accepts any certificate from an HTTPS agent.
	InsecureSkipTLSVerify bool
}

// AddFlags registers --server, --token-file and --insecure-skip-tls-verify.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Server, "server", DefaultServer, "URL of the actorlet agent's API")
	fs.StringVar(&f.TokenFile, "token-file", "", "file holding the bearer token for the agent's API")
	fs.BoolVar(&f.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "accept any certificate from an HTTPS agent (a self-signed one, say)")
}

// Client returns a Client configured by the flags, reading the token file.
func (f *Flags) Client() (*Client, error) {
	opts := []Option{WithInsecureSkipTLSVerify(f.InsecureSkipTLSVerify)}
	if f.TokenFile != "" {
		data, err := os.ReadFile(f.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		token := strings.TrimSpace(string(data))
		if token == "" {
			return nil, fmt.Errorf("--token-file %s is empty", f.TokenFile)
		}
		opts = append(opts, WithToken(token))
	}
	return New(f.Server, opts...)
}
