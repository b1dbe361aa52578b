<?php

declare(strict_types=1);

namespace Acme\Orders;

use Acme\Orders\Contracts\OrderStore;
use Psr\Log\{LoggerInterface, NullLogger as Quiet};
use function Acme\Util\money_format;

/**
 * Places orders and keeps their lines in a store.
 */
#[Service(name: 'orders')]
final class OrderService implements Contracts\Placer
{
    use Concerns\Timestamps;

    public const MAX_LINES = 100;

    private array $lines = [];

    public function __construct(private OrderStore $store, private ?LoggerInterface $log = null)
    {
        $this->log ??= new Quiet();
    }

    /**
     * Adds a line to the order and returns the new line count.
     *
     * @param string $sku product code
     */
    public function addLine(string $sku, int $quantity = 1): int
    {
        if (count($this->lines) >= self::MAX_LINES) {
            throw new \OverflowException('too many lines');
        }
        $this->lines[] = ['sku' => $sku, 'quantity' => $quantity];
        return count($this->lines);
    }

    /**
     * Sums the quantities of the lines the filter keeps.
     */
    public function total(callable $keep = null): int
    {
        $keep ??= fn(array $line): bool => true;
        return array_sum(array_map(fn($line) => $line['quantity'], array_filter($this->lines, $keep)));
    }

    public static function describe(array $line): string
    {
        return money_format($line['quantity']) . ' x ' . $line['sku'];
    }
}

interface Placer
{
    public function addLine(string $sku, int $quantity = 1): int;
}

trait Timestamps
{
    /** When the order was last touched. */
    public function touch(): void
    {
        $this->touchedAt = new \DateTimeImmutable();
    }
}

enum Status: string
{
    case Open = 'open';
    case Paid = 'paid';

    public function label(): string
    {
        return ucfirst($this->value);
    }
}

/**
 * Formats a quantity as a price string.
 */
function format_quantity(int $quantity): string
{
    return sprintf('%d pcs', $quantity);
}
