defmodule Acme.Orders do
  @moduledoc "Orders and their lines."
  alias Acme.Orders.Line
  import Enum, only: [sum: 1, filter: 2]
  require Logger

  # Sums the quantities of the lines the filter keeps.
  def total_quantity(lines, keep \\ fn _ -> true end) do
    lines
    |> filter(keep)
    |> Enum.map(& &1.quantity)
    |> sum()
  end

  def parse(text) when is_binary(text) do
    [sku, quantity] = String.split(text, " x ")
    %Line{sku: String.trim(sku), quantity: String.to_integer(String.trim(quantity))}
  end

  defp log(message), do: Logger.debug(message)

  defmodule Line do
    defstruct [:sku, quantity: 1]

    def empty?(%Line{quantity: quantity}), do: quantity == 0
  end
end
