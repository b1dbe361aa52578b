module Orders

using Dates
import Base: show, isless

export OrderLine, total_quantity

"""
A line of an order: a product and how many of it.
"""
struct OrderLine{T<:Integer}
    sku::String
    quantity::T
end

OrderLine(sku::String) = OrderLine(sku, 1)

# Sums the quantities of the lines the filter keeps.
function total_quantity(lines::Vector{<:OrderLine}; keep = _ -> true)
    total = 0
    for line in lines
        keep(line) && (total += line.quantity)
    end
    return total
end

Base.show(io::IO, line::OrderLine) = print(io, line.sku, " x ", line.quantity)

isless(a::OrderLine, b::OrderLine) = isless(a.sku, b.sku)

abstract type OrderStore end

mutable struct MemoryStore <: OrderStore
    saved::Dict{String,Vector{OrderLine}}
end

macro must(ex)
    :($(esc(ex)) || error("check failed: ", $(string(ex))))
end

module Parsing
# Reads a line written as SKU x QUANTITY.
function parse_line(text::AbstractString)
    sku, quantity = split(text, " x ")
    return (strip(sku), parse(Int, quantity))
end
end

end
