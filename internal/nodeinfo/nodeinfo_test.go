package nodeinfo

import (
	"net"
	"slices"
	"strings"
	"testing"
)

func TestDefaultRouteInterface(t *testing.T) {
	const header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
	tests := []struct {
		name, table, want string
		wantErr           bool
	}{
		{name: "default after a subnet", table: header +
			"docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n" +
			"eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n", want: "eth0"},
		{name: "first default wins", table: header +
			"wlan0\t00000000\t0100A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n" +
			"eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n", want: "wlan0"},
		{name: "no default", table: header + "eth0\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n", wantErr: true},
		{name: "empty", table: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultRouteInterface(strings.NewReader(tt.table))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("= %q, %v, want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPickHostIPs(t *testing.T) {
	cidr := func(s string) net.Addr {
		ip, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		n.IP = ip
		return n
	}
	tests := []struct {
		name  string
		addrs []net.Addr
		want  []string
	}{
		{name: "v4 then v6", addrs: []net.Addr{cidr("fe80::1/64"), cidr("2001:db8::5/64"), cidr("127.0.0.1/8"), cidr("10.0.0.5/24"), cidr("10.0.0.6/24")}, want: []string{"10.0.0.5", "2001:db8::5"}},
		{name: "only link-local and loopback", addrs: []net.Addr{cidr("fe80::1/64"), cidr("127.0.0.1/8"), cidr("169.254.1.1/16")}, want: nil},
		{name: "IPAddr", addrs: []net.Addr{&net.IPAddr{IP: net.ParseIP("192.168.1.2")}}, want: []string{"192.168.1.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PickHostIPs(tt.addrs); !slices.Equal(got, tt.want) {
				t.Fatalf("= %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseNodeIPs(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "10.0.0.5", want: []string{"10.0.0.5"}},
		{in: "10.0.0.5,2001:db8::5", want: []string{"10.0.0.5", "2001:db8::5"}},
		{in: "2001:DB8::5", want: []string{"2001:db8::5"}},
		{in: "10.0.0.5,10.0.0.6", wantErr: true},
		{in: "a,b,c", wantErr: true},
		{in: "host", wantErr: true},
		{in: "0.0.0.0", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseNodeIPs(tt.in)
			if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
				t.Fatalf("= %q, %v, want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestMemTotal(t *testing.T) {
	got, err := MemTotal(strings.NewReader("MemTotal:       16318412 kB\nMemFree:  1 kB\n"))
	if err != nil || got != 16318412*1024 {
		t.Fatalf("= %d, %v", got, err)
	}
	if _, err := MemTotal(strings.NewReader("MemFree: 1 kB\n")); err == nil {
		t.Fatal("no MemTotal: want an error")
	}
}

func TestAllocatableHasCPU(t *testing.T) {
	a := Allocatable(t.TempDir())
	if a.Cpu().Value() < 1 {
		t.Fatalf("cpu %v, want at least 1", a.Cpu())
	}
	if a.Memory().Value() <= 0 || a.StorageEphemeral().Value() <= 0 {
		t.Fatalf("memory %v, ephemeral storage %v: want both read on Linux", a.Memory(), a.StorageEphemeral())
	}
}
