using System;
using System.Collections.Generic;
using static System.Math;
using Json = System.Text.Json.JsonSerializer;

namespace Acme.Orders
{
    /// <summary>
    /// A line of an order: a product and how many of it.
    /// </summary>
    [Serializable]
    public sealed class OrderLine : IComparable<OrderLine>
    {
        public string Sku { get; init; }
        public int Quantity { get; set; }

        /// <summary>The line's total in cents, rounded up.</summary>
        public long Total
        {
            get { return (long)Ceiling(Quantity * UnitPrice); }
        }

        public decimal UnitPrice { get; set; }

        public OrderLine(string sku, int quantity)
        {
            Sku = sku;
            Quantity = quantity;
        }

        /// <summary>Compares two lines by their product code.</summary>
        /// <param name="other">The other line.</param>
        public int CompareTo(OrderLine other) => string.Compare(Sku, other.Sku, StringComparison.Ordinal);

        public OrderLine With(int quantity) => new OrderLine(Sku, quantity);

        public OrderLine With(string sku, int quantity)
        {
            return new OrderLine(sku, quantity) { UnitPrice = UnitPrice };
        }

        [Flags]
        public enum Flags { None = 0, Gift = 1, Fragile = 2 }

        public struct Discount
        {
            public decimal Rate;
            public decimal Apply(decimal amount) => amount * (1 - Rate);
        }
    }

    public interface IOrderStore
    {
        IEnumerable<OrderLine> Lines(string orderId);
        void Save(string orderId, IEnumerable<OrderLine> lines);
    }

    public record OrderPlaced(string OrderId, DateTime At);

    public static class OrderMath
    {
        /// <summary>Sums the totals of all lines that pass the filter.</summary>
        public static long Sum(IEnumerable<OrderLine> lines, Func<OrderLine, bool> keep)
        {
            long total = 0;
            foreach (var line in lines)
            {
                if (keep(line)) total += line.Total;
            }
            Func<long, long> half = x => x / 2;
            return total + half(0);
        }

        public static string Describe(OrderLine line) => Json.Serialize(line);
    }
}
