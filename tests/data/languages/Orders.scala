package com.acme.orders

import scala.collection.mutable
import com.acme.util.{Money, Rounding => Round}
import java.time._

/** A line of an order: a product and how many of it. */
@SerialVersionUID(1L)
final case class OrderLine(sku: String, quantity: Int) extends Ordered[OrderLine] {

  /** The line with a new quantity, never below zero. */
  def withQuantity(quantity: Int): OrderLine = copy(quantity = math.max(quantity, 0))

  def withQuantity(sku: String, quantity: Int): OrderLine =
    OrderLine(sku, math.max(quantity, 0))

  override def compare(that: OrderLine): Int = sku.compare(that.sku)
}

object OrderLine {
  /** Reads a line written as SKU x QUANTITY. */
  def parse(text: String): OrderLine = {
    val parts = text.split(" x ")
    val sku = parts(0).trim
    OrderLine(sku, parts(1).trim.toInt)
  }

  val byQuantity: (OrderLine, OrderLine) => Boolean = (a, b) => a.quantity < b.quantity
}

/** Keeps order lines by order id. */
trait OrderStore {
  def lines(orderId: String): Seq[OrderLine]
  def save(orderId: String, lines: Seq[OrderLine]): Unit
}

class MemoryStore extends OrderStore {
  private val saved = mutable.Map.empty[String, Seq[OrderLine]]

  def lines(orderId: String): Seq[OrderLine] = saved.getOrElse(orderId, Seq.empty)

  def save(orderId: String, lines: Seq[OrderLine]): Unit = {
    saved(orderId) = lines
  }

  class Snapshot(val at: Instant) {
    def size: Int = saved.size
  }
}

enum Status {
  case Open, Paid, Shipped
}

/** Sums the quantities of the lines the filter keeps. */
def totalQuantity(lines: Seq[OrderLine], keep: OrderLine => Boolean = _ => true): Int = {
  lines.filter(keep).map(_.quantity).sum
}
