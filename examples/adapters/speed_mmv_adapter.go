// An mmv-writer adapter for Speed, the Go MMV writer (github.com/performancecopilot/speed):
// the Go half. speed_mmv_adapter.py speaks the conformance protocol and turns the MMV
// fixture into JSON (pcpconform reads the fixture); this program writes that content with
// Speed's API:
//
//	speed_mmv_adapter SPEC.json NAME
//
// It writes $PCP_TMP_DIR/mmv/NAME, PCP_TMP_DIR being taken from the pcp.conf that
// $PCP_CONF names (the wrapper gives it a private one). Speed chooses the cluster, the
// items, the indom serials and the instance ids itself, by hashing names; the fixture's
// are not written. Build it where Speed and its dependencies are in GOPATH (Debian's
// golang-go, golang-github-edsrzf-mmap-go-dev and golang-github-pkg-errors-dev, and
// hdrhistogram-go v1.1.0), outside this repository:
//
//	GO111MODULE=off GOPATH=$HOME/go:/usr/share/gocode go build -o speed_mmv_adapter speed_mmv_adapter.go
package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/performancecopilot/speed"
)

type value struct {
	Instance *int32  `json:"instance"`
	Atom     string  `json:"atom"`
	String   *string `json:"string"`
}

type metric struct {
	Name      string  `json:"name"`
	Type      int32   `json:"type"`
	Semantics int32   `json:"semantics"`
	Dimension uint32  `json:"dimension"`
	Indom     int64   `json:"indom"`
	Short     *string `json:"shorttext"`
	Help      *string `json:"helptext"`
	Values    []value `json:"values"`
}

type indom struct {
	Serial    int64             `json:"serial"`
	Short     *string           `json:"shorttext"`
	Help      *string           `json:"helptext"`
	Instances [][2]interface{} `json:"instances"`
}

type spec struct {
	Flags   int      `json:"flags"`
	Indoms  []indom  `json:"indoms"`
	Metrics []metric `json:"metrics"`
}

func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// the pmAtomValue word as the Go value Speed takes for the type
func typed(t speed.MetricType, v value) interface{} {
	if v.String != nil {
		return *v.String
	}
	raw, _ := hex.DecodeString(v.Atom)
	word := binary.LittleEndian.Uint64(raw)
	switch t {
	case speed.Int32Type:
		return int32(uint32(word))
	case speed.Uint32Type:
		return uint32(word)
	case speed.Int64Type:
		return int64(word)
	case speed.Uint64Type:
		return word
	case speed.FloatType:
		return math.Float32frombits(uint32(word))
	case speed.DoubleType:
		return math.Float64frombits(word)
	}
	return nil
}

func unit(word uint32) speed.MetricUnit {
	u := speed.NewMetricUnit()
	get := func(shift uint) int8 { // a signed 4-bit field
		n := int8((word >> shift) & 0xF)
		if n > 7 {
			n -= 16
		}
		return n
	}
	if d := get(28); d != 0 {
		u = u.Space(speed.SpaceUnit((word>>16)&0xF<<16), d)
	}
	if d := get(24); d != 0 {
		u = u.Time(speed.TimeUnit((word>>12)&0xF<<12), d)
	}
	if d := get(20); d != 0 {
		u = u.Count(speed.CountUnit((word>>8)&0xF<<8), d)
	}
	return u
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: speed_mmv_adapter SPEC.json NAME")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var s spec
	if err := json.Unmarshal(raw, &s); err != nil {
		panic(err)
	}
	client, err := speed.NewPCPClient(os.Args[2])
	if err != nil {
		panic(err)
	}
	if err := client.SetFlag(speed.MMVFlag(s.Flags)); err != nil {
		panic(err)
	}
	indoms := map[int64]*speed.PCPInstanceDomain{}
	names := map[int64]map[int32]string{}
	for _, d := range s.Indoms {
		var instances []string
		names[d.Serial] = map[int32]string{}
		for _, pair := range d.Instances {
			id, name := int32(pair[0].(float64)), pair[1].(string)
			instances = append(instances, name)
			names[d.Serial][id] = name
		}
		dom, err := speed.NewPCPInstanceDomain(fmt.Sprintf("indom%d", d.Serial), instances, text(d.Short), text(d.Help))
		if err != nil {
			panic(err)
		}
		client.MustRegisterIndom(dom)
		indoms[d.Serial] = dom
	}
	for _, m := range s.Metrics {
		t, sem := speed.MetricType(m.Type), speed.MetricSemantics(m.Semantics)
		if m.Type < 0 || m.Type > 6 {
			fmt.Fprintf(os.Stderr, "Speed has no MMV type %d (metric %s)\n", m.Type, m.Name)
			os.Exit(3)
		}
		if m.Indom == 0 || m.Indom == -1 {
			metric, err := speed.NewPCPSingletonMetric(typed(t, m.Values[0]), m.Name, t, sem, unit(m.Dimension), text(m.Short), text(m.Help))
			if err != nil {
				panic(err)
			}
			client.MustRegister(metric)
			continue
		}
		vals := speed.Instances{}
		for _, v := range m.Values {
			vals[names[m.Indom][*v.Instance]] = typed(t, v)
		}
		metric, err := speed.NewPCPInstanceMetric(vals, m.Name, indoms[m.Indom], t, sem, unit(m.Dimension), text(m.Short), text(m.Help))
		if err != nil {
			panic(err)
		}
		client.MustRegister(metric)
	}
	client.MustStart()
}
