package podsync

import "testing"

// The kubelet's env file format (fileKeyRef), table-tested.
func TestEnvFileValue(t *testing.T) {
	tests := []struct {
		name, data, key string
		want            string
		found           bool
		wantErr         string
	}{
		{name: "the documentation's example", data: "DB_ADDRESS='address'\nREST_ENDPOINT='endpoint'\n", key: "DB_ADDRESS", want: "address", found: true},
		{name: "second key", data: "DB_ADDRESS='address'\nREST_ENDPOINT='endpoint'", key: "REST_ENDPOINT", want: "endpoint", found: true},
		{name: "absent", data: "A='1'\n", key: "B"},
		{name: "empty file", data: "", key: "B"},
		{name: "comments, blanks, indentation", data: "# c\n\n   \n  A='1' # trailing\n", key: "A", want: "1", found: true},
		{name: "literal: no escapes, no expansion", data: `A='$HOME \n "x"'`, key: "A", want: `$HOME \n "x"`, found: true},
		{name: "multi-line", data: "A='one\ntwo'\nB='3'", key: "B", want: "3", found: true},
		{name: "multi-line value", data: "A='one\n  two'\n", key: "A", want: "one\n  two", found: true},
		{name: "empty quotes", data: "A=''\n", key: "A", want: "", found: true},
		{name: "blank after '=': empty, as the shell", data: "A= 'x'\n", key: "A", want: "", found: true},
		{name: "nothing after '='", data: "A=\n", key: "A", want: "", found: true},
		{name: "first assignment wins", data: "A='1'\nA='2'\n", key: "A", want: "1", found: true},
		{name: "unquoted", data: "A=1\n", key: "A", wantErr: "line 1: the value of A must be in single quotes"},
		{name: "double quotes", data: "X='0'\nA=\"1\"\n", key: "A", wantErr: "line 2: the value of A must be in single quotes"},
		{name: "no '='", data: "A\n", key: "A", wantErr: "line 1: missing '='"},
		{name: "blank before '='", data: "A ='1'\n", key: "A", wantErr: "line 1: whitespace before '=' is not allowed"},
		{name: "no name", data: "='1'\n", key: "A", wantErr: "line 1: empty variable name"},
		{name: "content after the quote", data: "A='1' x\n", key: "A", wantErr: "line 1: unexpected content after the closing quote"},
		{name: "unclosed", data: "A='1\nB=2\n", key: "B", wantErr: "line 1: unclosed single quote"},
		{name: "a bad line after the key is not read", data: "A='1'\nbad\n", key: "A", want: "1", found: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := envFileValue([]byte(tt.data), tt.key)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("= %q, %v, %v; want error %q", got, found, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || found != tt.found {
				t.Fatalf("= %q, %v, %v; want %q, %v", got, found, err, tt.want, tt.found)
			}
		})
	}
}
