

def test_base_classes_after_a_colon():
    assert base_names("public class Cart : BaseCart, IDisposable where T : class", "csharp") == [
        "BaseCart",
        "IDisposable",
    ]
    assert base_names("class Cart<T : Any>(val size: Int) : Base(size), Shop.Sized", "kotlin") == [
        "Base",
        "Shop.Sized",
    ]
    assert base_names("class Cart: Base, Codable", "swift") == ["Base", "Codable"]
    assert base_names("class Cart(Base):", "python") == ["Base"]
