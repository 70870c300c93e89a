import MoonEvents

/// Consumes run events. The runner calls `report` on one serial delivery
/// queue, in causal order per node, so a reporter needs no locking of its own.
public protocol Reporter: AnyObject {
    func report(_ event: RunEvent)
    /// Called once after `graph-complete`, before moon exits: flush and tidy up.
    func finish()
}

extension Reporter {
    public func finish() {}
}
