package com.acme.orders

import kotlin.math.max
import com.acme.util.*
import java.time.Instant as Moment

/**
 * A line of an order: a product and how many of it.
 */
@Serializable
data class OrderLine(val sku: String, val quantity: Int) : Comparable<OrderLine> {

    /** The line with a new quantity, never below zero. */
    fun withQuantity(quantity: Int): OrderLine = copy(quantity = max(quantity, 0))

    fun withQuantity(sku: String, quantity: Int): OrderLine {
        return OrderLine(sku, max(quantity, 0))
    }

    override fun compareTo(other: OrderLine): Int = sku.compareTo(other.sku)

    constructor(sku: String) : this(sku, 1)

    companion object Parser {
        /** Reads a line written as SKU x QUANTITY. */
        fun parse(text: String): OrderLine {
            val (sku, quantity) = text.split(" x ")
            return OrderLine(sku.trim(), quantity.trim().toInt())
        }
    }

    inner class Checker {
        fun isEmpty() = quantity == 0
    }
}

interface OrderStore {
    fun lines(orderId: String): List<OrderLine>
    fun save(orderId: String, lines: List<OrderLine>)
}

object Registry {
    private val stores = mutableMapOf<String, OrderStore>()

    fun register(name: String, store: OrderStore) {
        stores[name] = store
    }
}

enum class Status { OPEN, PAID, SHIPPED }

/**
 * Sums the quantities of the lines the filter keeps.
 */
fun List<OrderLine>.totalQuantity(keep: (OrderLine) -> Boolean = { true }): Int {
    var total = 0
    for (line in this) {
        if (keep(line)) total += line.quantity
    }
    return total
}

val byQuantity = { a: OrderLine, b: OrderLine -> a.quantity - b.quantity }

typealias LineFilter = (OrderLine) -> Boolean
