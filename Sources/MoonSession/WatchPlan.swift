import MoonGraph

/// Which nodes a rerun runs.
package enum WatchPlan {
    /// `touched` (graph indices) and everything selected that depends on
    /// them: what a change affects, and so which running nodes restart.
    package static func affected(_ touched: Set<Int>, plan: Plan) -> Set<Int> {
        var nodes = touched.filter(plan.isSelected)
        let dependents = plan.graph.dependents()
        var stack = Array(nodes)
        while let node = stack.popLast() {
            for dependent in dependents[node] where plan.isSelected(dependent) && nodes.insert(dependent).inserted {
                stack.append(dependent)
            }
        }
        return nodes
    }

    /// `touched` (graph indices), with what they need that did not succeed
    /// when it last ran (a failed need must not stand as done), and then
    /// everything selected that depends on any of them.
    package static func rerun(_ touched: Set<Int>, plan: Plan, succeeded: Set<Int>) -> Set<Int> {
        let graph = plan.graph
        var nodes = touched.filter(plan.isSelected)
        var stack = Array(nodes)
        while let node = stack.popLast() {
            for need in graph.nodes[node].needs where !succeeded.contains(need) && nodes.insert(need).inserted {
                stack.append(need)
            }
        }
        return affected(nodes, plan: plan)
    }
}
