use super::*;

fn build(json: &str) -> Result<GraphAsset, GraphError> {
    build_graph(json, &LOCOMOTION_CLIPS)
}

/// The locomotion JSON with `from` replaced by `to` (exactly once).
fn edited(from: &str, to: &str) -> String {
    assert_eq!(LOCOMOTION_JSON.matches(from).count(), 1, "{from}");
    LOCOMOTION_JSON.replace(from, to)
}

fn error(json: &str) -> GraphError {
    match build(json) {
        Err(e) => e,
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn the_example_builds() {
    let l = Locomotion::new().unwrap();
    let g = l.graph.view();
    assert_eq!(g.param_count(), 3);
    assert_eq!(g.machine_count(), 2);
    assert_eq!(g.state_count(), 6);
    assert_eq!(g.machine(1).unwrap().name, "airborne");
    assert_eq!(l.clips.len(), LOCOMOTION_CLIPS.len());
    for (c, name) in l.clips.iter().zip(LOCOMOTION_CLIPS) {
        assert_eq!(c.name, name);
    }
    assert!(l.tracks()[6].is_some());
}

#[test]
fn errors_name_the_bad_field() {
    let e = error("{");
    assert_eq!(e.field, "json");
    let e = error(&edited(r#""clip": "fall""#, r#""clip": "fal""#));
    assert_eq!(e.field, "nodes[3].clip");
    assert!(e.message.contains("unknown clip \"fal\""), "{e}");
    let e = error(&edited(r#""param": "grounded""#, r#""param": "ground""#));
    assert_eq!(
        e.field,
        "machine.states[2].machine.transitions[1].when[0].param"
    );
    assert!(e.message.contains("unknown parameter \"ground\""), "{e}");
    let e = error(&edited(r#""param": "grounded""#, r#""param": "speed""#));
    assert!(e.message.contains("is a float, not a bool"), "{e}");
    let e = error(&edited(
        r#""from": "jump", "to": "fall""#,
        r#""from": "jump", "to": "idle""#,
    ));
    assert_eq!(e.field, "machine.states[2].machine.transitions[0].to");
    assert!(e.message.contains("another machine (locomotion)"), "{e}");
    let e = error(&edited(
        r#""from": "idle", "to": "move""#,
        r#""from": "idle", "to": "mvoe""#,
    ));
    assert_eq!(e.field, "machine.transitions[1].to");
    assert!(e.message.contains("unknown state \"mvoe\""), "{e}");
    let e = error(&edited(r#""entry": "jump""#, r#""entry": "hop""#));
    assert_eq!(e.field, "machine.states[2].machine.entry");
    let e = error(&edited(r#""node": "fall""#, r#""node": "falls""#));
    assert_eq!(e.field, "machine.states[2].machine.states[1].node");
    let e = error(&edited(r#""type": "trigger""#, r#""type": "pulse""#));
    assert_eq!(e.field, "params[1].type");
    let e = error(&edited(
        r#""mode": "clamp" },
    { "name": "fall""#,
        r#""mode": "bounce" },
    { "name": "fall""#,
    ));
    assert_eq!(e.field, "nodes[2].mode");
    let e = error(&edited(r#""blend": "ease-out""#, r#""blend": "ease""#));
    assert_eq!(e.field, "machine.states[2].machine.transitions[1].blend");
    let e = error(&edited(
        r#""duration": 0.1, "blend""#,
        r#""duration": -1, "blend""#,
    ));
    assert_eq!(e.field, "machine.states[2].machine.transitions[1].duration");
    let e = error(&edited(
        r#"{ "exit_time": 1.0 }"#,
        r#"{ "exit_time": 1.0, "event": "x" }"#,
    ));
    assert_eq!(e.field, "machine.states[2].machine.transitions[0].when[0]");
    let e = error(&edited(
        r#"{ "name": "idle", "node": "idle" }"#,
        r#"{ "name": "idle", "node": "idle", "colour": 1 }"#,
    ));
    assert_eq!(e.field, "json");
    assert!(e.message.contains("colour"), "{e}");
    let e = error(&edited(
        r#"{ "name": "jump", "node": "jump" }"#,
        r#"{ "name": "jump", "node": "jump", "machine": { "name": "x", "entry": "y", "states": [] } }"#,
    ));
    assert_eq!(e.field, "machine.states[2].machine.states[0]");
    let e = error(&edited(
        r#"{ "name": "move", "node": "move" }"#,
        r#"{ "name": "idle", "node": "move" }"#,
    ));
    assert_eq!(e.field, "machine.states[1].name");
    let e = error(&edited(
        r#"{ "name": "speed", "type": "float", "default": 0.0 }"#,
        r#"{ "name": "speed", "type": "float", "default": true }"#,
    ));
    assert_eq!(e.field, "params[0].default");
}

#[test]
fn node_cycles_and_deep_nesting_are_refused() {
    let cyclic = r#"{
      "params": [ { "name": "w", "type": "float" } ],
      "nodes": [
        { "name": "a", "blend": { "a": "b", "b": "idle", "param": "w" } },
        { "name": "b", "blend": { "a": "idle", "b": "a", "param": "w" } },
        { "name": "idle", "clip": "idle" }
      ],
      "machine": { "name": "m", "entry": "s", "states": [ { "name": "s", "node": "a" } ] }
    }"#;
    let e = error(cyclic);
    assert!(e.message.contains("cycle: a -> b -> a"), "{e}");
    let nest = |depth: usize| {
        let mut m =
            r#"{ "name": "m", "entry": "s", "states": [ { "name": "s", "node": "idle" } ] }"#
                .to_string();
        for k in 0..depth {
            m = format!(
                r#"{{ "name": "m{k}", "entry": "s", "states": [ {{ "name": "s", "machine": {m} }} ] }}"#
            );
        }
        format!(r#"{{ "nodes": [ {{ "name": "idle", "clip": "idle" }} ], "machine": {m} }}"#)
    };
    assert!(build(&nest(MAX_DEPTH - 1)).is_ok());
    let e = error(&nest(MAX_DEPTH));
    assert!(e.message.contains("nest more than"), "{e}");
    // Every other node kind.
    let all = r#"{
      "params": [ { "name": "w", "type": "float", "default": 0.5 } ],
      "nodes": [
        { "name": "idle", "clip": "idle", "speed": 0.5, "mode": "ping-pong" },
        { "name": "add", "additive": { "base": "idle", "additive": "walk", "param": "w" } },
        { "name": "walk", "clip": "walk" },
        { "name": "arms", "masked": { "base": "add", "layer": "walk", "param": "w", "joints": [ { "joint": 3, "weight": 1 } ] } }
      ],
      "machine": { "name": "m", "entry": "s", "states": [ { "name": "s", "node": "arms" } ] }
    }"#;
    let g = build(all).unwrap();
    let v = g.view();
    // Children first: idle, walk, add, arms.
    assert_eq!(v.node_count(), 4);
    assert!(matches!(
        v.node(3),
        Some(Node::Masked {
            base: 2,
            layer: 1,
            ..
        })
    ));
}
