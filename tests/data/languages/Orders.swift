import Foundation
import struct Swift.Array

/// A line of an order: a product and how many of it.
@available(macOS 12, *)
public struct OrderLine: Codable, Comparable {
    public let sku: String
    public var quantity: Int

    /// The line's weight in grams for shipping.
    public var weight: Int {
        return quantity * 250
    }

    public init(sku: String, quantity: Int = 1) {
        self.sku = sku
        self.quantity = quantity
    }

    /// Compares two lines by their product code.
    public static func < (lhs: OrderLine, rhs: OrderLine) -> Bool {
        return lhs.sku < rhs.sku
    }

    func with(quantity: Int) -> OrderLine {
        OrderLine(sku: sku, quantity: quantity)
    }

    func with(sku: String, quantity: Int) -> OrderLine {
        OrderLine(sku: sku, quantity: quantity)
    }

    enum Kind {
        case physical
        case digital
    }
}

/// Keeps order lines by order id.
protocol OrderStore {
    func lines(for orderId: String) -> [OrderLine]
    func save(_ lines: [OrderLine], for orderId: String)
}

final class MemoryStore: OrderStore {
    private var saved: [String: [OrderLine]] = [:]

    func lines(for orderId: String) -> [OrderLine] {
        saved[orderId] ?? []
    }

    func save(_ lines: [OrderLine], for orderId: String) {
        saved[orderId] = lines
    }

    deinit {
        saved.removeAll()
    }
}

extension Array where Element == OrderLine {
    /// Sums the quantities of the lines the filter keeps.
    func totalQuantity(keeping keep: (OrderLine) -> Bool = { _ in true }) -> Int {
        var total = 0
        for line in self where keep(line) {
            total += line.quantity
        }
        return total
    }
}

actor OrderCounter {
    var count = 0
    func increment() { count += 1 }
}

let byQuantity = { (a: OrderLine, b: OrderLine) in a.quantity < b.quantity }
