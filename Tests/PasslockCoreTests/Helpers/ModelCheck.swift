/// A small explicit-state model checker for the pure machines (the sleep
/// handshake, the Wayland lock's life, the console lock sequence): every
/// order of `events` up to `depth` long, from a fresh machine. A `Ghost`
/// watches what happened so far (what a rule needs to know of the past);
/// `rule` sees each step and says what it broke. States already seen with
/// the same ghost are not explored again, so depth 8 (and more) over a
/// dozen events is a moment's work, with the path to the first break.
struct ModelCheck<Machine: Hashable, Event, Effect, Ghost: Hashable> {
  var machine: Machine
  var ghost: Ghost
  let events: [Event]
  let handle: (inout Machine, Event) -> [Effect]
  /// The rule for one step: nil, or what it broke.
  let rule: (_ ghost: Ghost, _ event: Event, _ effects: [Effect]) -> String?
  /// The ghost after the step.
  let watch: (_ ghost: Ghost, _ event: Event, _ effects: [Effect]) -> Ghost
  /// Whether `event` can come to `machine` at all (a machine that traps
  /// events out of phase is explored over the ones its interpreter can send).
  var enabled: (_ machine: Machine, _ event: Event) -> Bool = { _, _ in true }

  struct Node: Hashable {
    var machine: Machine
    var ghost: Ghost
  }

  /// The first break and the path to it, or nil; and how many distinct
  /// states were reached (a check that reaches few proves little).
  func run(depth: Int) -> (violation: String?, states: Int) {
    var seen: Set<Node> = [Node(machine: machine, ghost: ghost)]
    var frontier: [(node: Node, path: [String])] = [(Node(machine: machine, ghost: ghost), [])]
    for _ in 0..<depth {
      var next: [(node: Node, path: [String])] = []
      for (node, path) in frontier {
        for event in events where enabled(node.machine, event) {
          var machine = node.machine
          let effects = handle(&machine, event)
          let step = "\(event) → \(effects)"
          if let broken = rule(node.ghost, event, effects) {
            return ("\(broken), after:\n  " + (path + [step]).joined(separator: "\n  "), seen.count)
          }
          let reached = Node(machine: machine, ghost: watch(node.ghost, event, effects))
          if seen.insert(reached).inserted { next.append((reached, path + [step])) }
        }
      }
      frontier = next
    }
    return (nil, seen.count)
  }
}
