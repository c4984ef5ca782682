//! Offers of a next task: when agents racing for work each ask a tracker's "next task" tool
//! (Task Master's `next_task`), each is offered a different ready task. The task an agent is
//! offered is set aside for it for `OFFER_SECONDS`: a concurrent caller is offered the next
//! ready task instead. An offer is soft: it refuses nothing (another agent may still claim
//! the task; a claim is what holds it), and once every ready task is offered to others, the
//! first is offered again, as it was before offers. An agent holds at most one offer per list:
//! its next offer replaces the last, and lapsed offers are dropped whenever an offer is made,
//! so a list's offers number at most its agents asking at once.
//!
//! The offers of a list are kept as a JSON object, todo id → `{"agent", "until"}` (until:
//! epoch microseconds), in the list's offers lock row (`src/store/offers.rs`).

use serde_json::{json, Map, Value};

/// How long an offered task is set aside for the agent it was offered to: long enough for a
/// model's turn between asking for the next task and claiming it.
pub const OFFER_SECONDS: i64 = 120;

/// The first of `candidates` (ids, best first) not offered to an agent other than `agent`
/// under an offer still running at `now_us`; the first candidate when every one is; None
/// when there is none.
pub fn pick(offers: &Value, candidates: &[i64], agent: &str, now_us: i64) -> Option<i64> {
    let taken = |id: &i64| match offers.get(id.to_string()) {
        Some(o) => o["agent"].as_str() != Some(agent) && o["until"].as_i64().is_some_and(|until| until > now_us),
        None => false,
    };
    candidates.iter().copied().find(|id| !taken(id)).or_else(|| candidates.first().copied())
}

/// `offers` with `id` offered to `agent` until `OFFER_SECONDS` after `now_us`: the agent's
/// earlier offer and every lapsed offer dropped.
pub fn with_offer(offers: &Value, id: i64, agent: &str, now_us: i64) -> Value {
    let mut kept: Map<String, Value> = offers
        .as_object()
        .map(|all| {
            all.iter()
                .filter(|(_, o)| {
                    o["agent"].as_str().is_some_and(|a| a != agent) && o["until"].as_i64().is_some_and(|u| u > now_us)
                })
                .map(|(k, o)| (k.clone(), o.clone()))
                .collect()
        })
        .unwrap_or_default();
    kept.insert(id.to_string(), json!({"agent": agent, "until": now_us + OFFER_SECONDS * 1_000_000}));
    Value::Object(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000_000_000;

    #[test]
    fn racing_agents_are_offered_different_tasks_in_order() {
        let mut offers = json!({});
        let mut got = Vec::new();
        for agent in ["a", "b", "c"] {
            let id = pick(&offers, &[7, 3, 9], agent, NOW).unwrap();
            offers = with_offer(&offers, id, agent, NOW);
            got.push(id);
        }
        assert_eq!(got, [7, 3, 9]);
        // a fourth agent, every task offered to others: the first again, as without offers
        assert_eq!(pick(&offers, &[7, 3, 9], "d", NOW), Some(7));
        // the agent asking again is offered its own task again
        assert_eq!(pick(&offers, &[7, 3, 9], "b", NOW), Some(3));
    }

    #[test]
    fn an_agent_holds_one_offer_and_lapsed_offers_are_dropped() {
        let offers = with_offer(&json!({}), 7, "a", NOW);
        let offers = with_offer(&offers, 3, "a", NOW);
        assert_eq!(offers.as_object().unwrap().len(), 1, "{offers}");
        assert_eq!(pick(&offers, &[3, 7], "b", NOW), Some(7));
        let later = NOW + OFFER_SECONDS * 1_000_000;
        // lapsed at `until`: offered again, and dropped by the next offer
        assert_eq!(pick(&offers, &[3, 7], "b", later), Some(3));
        assert_eq!(
            with_offer(&offers, 7, "b", later),
            json!({"7": {"agent": "b", "until": later + OFFER_SECONDS * 1_000_000}})
        );
    }

    #[test]
    fn no_candidates_no_offer_and_malformed_offers_are_ignored() {
        assert_eq!(pick(&json!({}), &[], "a", NOW), None);
        let odd = json!({"7": "x", "3": {"agent": 1}, "x": null});
        assert_eq!(pick(&odd, &[7, 3], "a", NOW), Some(7));
        assert_eq!(with_offer(&odd, 3, "a", NOW).as_object().unwrap().len(), 1);
    }
}
