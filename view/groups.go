package view

import (
	"fmt"
	"io"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/render"
)

// GroupsSchema versions the JSON document `kstranded inspect --list -o json` (and inspect
// without --group) writes.
const GroupsSchema = "kstranded.groups/v1"

// Groups is the JSON document of the cluster's group list.
type Groups struct {
	render.Meta
	Groups []GroupListing `json:"groups"`
}

// GroupListing is one group of the list.
type GroupListing struct {
	Group string `json:"group"`
	// State is the coordinator's word (Empty, Stable, ...); null when the broker does
	// not say.
	State *string `json:"state"`
	// Protocol is the group type: classic, consumer (KIP-848), or another the broker
	// names; null from a broker before Kafka 3.8, which does not say.
	Protocol *string `json:"protocol"`
	// ProtocolType is what the members declared: consumer, connect, ...; null when the
	// broker names none.
	ProtocolType *string `json:"protocol_type"`
}

// NewGroups builds the view of a group list.
func NewGroups(ls []inspect.Listing) Groups {
	v := Groups{Meta: render.NewMeta(GroupsSchema, "inspect"), Groups: make([]GroupListing, 0, len(ls))}
	orNull := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for _, l := range ls {
		v.Groups = append(v.Groups, GroupListing{Group: l.ID, State: orNull(l.State), Protocol: orNull(l.GroupProtocol), ProtocolType: orNull(l.ProtocolType)})
	}
	return v
}

// PrintGroups prints the view: JSON, or a row per group and a line saying how many and
// how to inspect one.
func PrintGroups(w io.Writer, v Groups, f render.Format, pretty bool) error {
	if f == render.JSON {
		return render.WriteJSON(w, v)
	}
	text := func(s *string) string {
		if s == nil {
			return "-"
		}
		return render.Safe(*s) // names and words come from the cluster
	}
	grid := render.Grid{Header: []string{"GROUP", "STATE", "PROTOCOL", "PROTOCOL-TYPE"},
		Align: []render.Align{render.Left, render.Left, render.Left, render.Left}}
	for _, g := range v.Groups {
		grid.Rows = append(grid.Rows, []string{render.Safe(g.Group), text(g.State), text(g.Protocol), text(g.ProtocolType)})
	}
	if err := render.WriteGrid(w, grid, pretty); err != nil {
		return err
	}
	nw := render.NotesOf(w)
	if len(v.Groups) == 0 {
		_, err := fmt.Fprintln(nw, "No groups on this cluster.")
		return err
	}
	noun := "groups"
	if len(v.Groups) == 1 {
		noun = "group"
	}
	_, err := fmt.Fprintf(nw, "%d %s; kstranded inspect --group GROUP shows one's offsets and members.\n", len(v.Groups), noun)
	return err
}
