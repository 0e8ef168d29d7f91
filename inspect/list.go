package inspect

import (
	"context"
	"sort"
)

// Listing is one group of the cluster as ListGroups names it: what kafka-consumer-groups.sh
// --list shows (with --state and --type), without describing the group.
type Listing struct {
	ID string
	// State is the coordinator's word for the group's state (Empty, Stable, ...; Kafka
	// 2.6+ answers it), empty when the broker does not say.
	State string
	// GroupProtocol is ProtocolClassic, ProtocolConsumer, or another group type the broker
	// names (share, streams); empty from a broker before ListGroups v5 (Kafka 3.8, KIP-848),
	// which has no group type to tell.
	GroupProtocol string
	// ProtocolType is what the group's members declared: "consumer" for consumers,
	// "connect" for Kafka Connect workers; empty for a group without members' protocol.
	ProtocolType string
}

// ListGroups lists every group of the cluster (one ListGroups request per broker, as
// kadm shards it), sorted by name.
func (k *Kafka) ListGroups(ctx context.Context) ([]Listing, error) {
	c, cancel := k.bound(ctx)
	defer cancel()
	ls, err := k.adm.ListGroups(c)
	if err != nil {
		return nil, k.timeoutErr("listing the cluster's groups", err)
	}
	out := make([]Listing, 0, len(ls))
	for _, g := range ls {
		l := Listing{ID: g.Group, State: g.State, GroupProtocol: g.GroupType, ProtocolType: g.ProtocolType}
		if l.GroupProtocol == ProtocolConsumer && l.ProtocolType == "" {
			// A KIP-848 group's members are consumers by definition: Kafka answers
			// "consumer" (ConsumerGroup.protocolType()); kfake leaves it empty. As
			// consumerGroup does for the description.
			l.ProtocolType = "consumer"
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
